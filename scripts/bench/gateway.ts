import { generateEncryptionKeySpec, randomToken } from '@gateway/crypto';
import { unusedLocalPort, waitFor, type TestClient } from '@gateway/testkit';
import { basicAuthorization } from './browser.js';
import { logTail, rssBytes, type BenchProcess } from './processes.js';
import type { BenchRun } from './run.js';
import type { LoginTarget } from './sign-in.js';

const PLATFORM_KEY = 'BENCH';

export type IdentityProvider = {
  process: BenchProcess;
  issuer: string;
  origin: string;
  audience: string;
  clients: TestClient[];
};

/** The all-in-one gateway with its platform, ready for the gateway scenarios. */
export type GatewayUnderTest = {
  process: BenchProcess;
  url: string;
  /** Environment of the gateway processes (the split services take it too). */
  env: Record<string, string>;
  target: LoginTarget;
  bffAuthorization: string;
  backendAuthorization: string;
  rssAtStartBytes: number;
};

/** The testkit's real OpenID Provider, in a process of its own so its CPU counts apart. */
export async function startIdentityProvider(run: BenchRun): Promise<IdentityProvider> {
  const child = run.start('identity-provider', 'scripts/bench/targets/identity-provider.ts', {
    BENCH_ACCOUNTS: String(run.profile.accounts),
  });
  const ready = (await child.ready) as Omit<IdentityProvider, 'process'>;
  return { ...ready, process: child };
}

/** Another build of the all-in-one gateway: its checkout and the data it gets of its own. */
export type OtherBuild = {
  /** The process's name in the logs. */
  name: string;
  /** The checkout it runs from (its own node_modules). */
  dir: string;
  /** DATABASE_URL, REDIS_URL and REDIS_KEY_PREFIX: its own schema version, its own keys. */
  dataEnv: Record<string, string>;
};

/**
 * Starts the all-in-one gateway (this repository's, or `build`'s with the same configuration)
 * and creates the platform, its BFF key and a backend key.
 */
export async function startGateway(
  run: BenchRun,
  idp: IdentityProvider,
  build?: OtherBuild,
): Promise<GatewayUnderTest> {
  const client = (id: string) => {
    const found = idp.clients.find((each) => each.clientId === id);
    if (found === undefined) throw new Error(`the identity provider has no client ${id}`);
    return found;
  };
  const gatewayClient = client('test-gateway');
  const env = {
    ...(build?.dataEnv ?? run.dataEnv),
    NODE_ENV: 'production',
    LOG_LEVEL: run.options.logLevel ?? 'info',
    IDENTITY_ISSUER: idp.issuer,
    IDENTITY_OIDC_CLIENT_ID: gatewayClient.clientId,
    IDENTITY_OIDC_CLIENT_SECRET: gatewayClient.clientSecret,
    IDENTITY_ACCESS_TOKEN_AUDIENCE: idp.audience,
    IDENTITY_DEPLOYMENT_TIER: 'development',
    IDENTITY_ENVIRONMENT_SECRET_KEY: randomToken(),
    GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('bench'),
    // The provider's registered redirect URI; the bench carries the query to the gateway.
    AUTH_CALLBACK_URL: 'http://localhost:8080/v1/auth/callback',
    // Codes are produced ahead of S2 and redeemed up to a few minutes later.
    AUTH_HANDOFF_TTL_SECONDS: '300',
    RATE_LIMIT_BROWSER_PER_IP: '0',
    RATE_LIMIT_EXCHANGE_PER_CLIENT: '0',
    RATE_LIMIT_INTROSPECT_PER_CLIENT: '0',
    RATE_LIMIT_SERVER_PER_IP: '0',
  };
  const port = await unusedLocalPort();
  run.step(`starting the all-in-one gateway${build === undefined ? '' : ` of ${build.name}`}`);
  const child = run.start(
    build?.name ?? 'gateway-allinone',
    'services/all-in-one/src/gateway-main.ts',
    { ...env, PORT: String(port) },
    [],
    build?.dir,
    true,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url, [child]);
  const rssAtStartBytes = await rssBytes(child.pid);
  const keys = await createPlatform(url, await machineToken(idp, client('test-machine')));
  const bffAuthorization = basicAuthorization(keys.bff.clientId, keys.bff.clientSecret);
  return {
    process: child,
    url,
    env,
    target: {
      gatewayUrl: url,
      providerOrigin: idp.origin,
      platformKey: PLATFORM_KEY,
      returnTo: '/',
      bffAuthorization,
    },
    bffAuthorization,
    backendAuthorization: basicAuthorization(keys.backend.clientId, keys.backend.clientSecret),
    rssAtStartBytes,
  };
}

type Credential = { clientId: string; clientSecret: string };

/** The platform BENCH, its BFF key and a backend key, through the admin API. */
async function createPlatform(url: string, adminToken: string) {
  const admin = async (path: string, body: unknown): Promise<Credential[]> => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { credentials?: Credential[] };
    if (response.status !== 201) {
      throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
    }
    return json.credentials ?? [];
  };
  const [bff] = await admin('/v1/platforms', {
    platformKey: PLATFORM_KEY,
    displayName: 'Bench',
    redirectPairs: [
      {
        label: 'web',
        returnUrl: 'http://localhost:3000/',
        callbackUrl: 'http://localhost:3000/cb',
        isDefault: true,
      },
    ],
  });
  const [backend] = await admin(`/v1/platforms/${PLATFORM_KEY}/credentials`, { kind: 'backend' });
  if (bff === undefined || backend === undefined) throw new Error('no platform keys issued');
  return { bff, backend };
}

/**
 * The split deployment: the edge, registry, auth-flow and onboarding processes.
 * `processes` are named `split-<service>`.
 */
export type SplitUnderTest = { url: string; processes: BenchProcess[]; target: LoginTarget };

/**
 * Starts the split deployment with the all-in-one gateway's configuration, database, Redis
 * keys and encryption keys: sessions, handoff codes and platform keys made through either
 * deployment are good in the other, and the platform the all-in-one created is the split's.
 */
export async function startSplit(
  run: BenchRun,
  gateway: GatewayUnderTest,
): Promise<SplitUnderTest> {
  run.step('starting the split deployment (edge, registry, auth-flow, onboarding)');
  const names = ['registry', 'auth-flow', 'onboarding', 'edge'] as const;
  const ports = new Map<string, number>();
  for (const name of names) ports.set(name, await unusedLocalPort());
  const internal = (name: string) => `http://127.0.0.1:${ports.get(name) ?? 0}`;
  const env = {
    ...gateway.env,
    REGISTRY_SERVICE_URL: internal('registry'),
    AUTH_FLOW_SERVICE_URL: internal('auth-flow'),
    ONBOARDING_SERVICE_URL: internal('onboarding'),
  };
  const processes = names.map((name) =>
    run.start(
      `split-${name}`,
      `services/${name}/src/main.ts`,
      {
        ...env,
        PORT: String(ports.get(name) ?? 0),
      },
      [],
      undefined,
      true,
    ),
  );
  const url = internal('edge');
  await waitUntilReady(url, processes);
  return { url, processes, target: { ...gateway.target, gatewayUrl: url } };
}

async function waitUntilReady(url: string, all: BenchProcess[]): Promise<void> {
  // A process that exits stops the wait at once, with its log.
  let gone = false;
  const exited = new Promise<never>((_, reject) => {
    for (const each of all) {
      each.child.once('exit', () => {
        gone = true;
        reject(new Error(`${each.name} exited:\n${logTail(each.logFile)}`));
      });
    }
  });
  exited.catch(() => undefined);
  const ready = waitFor(
    async () => gone || (await fetch(`${url}/health/ready`).catch(() => undefined))?.status === 200,
    { timeoutMs: 120_000, intervalMs: 200, what: `${url} to answer ready` },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${all.map((each) => logTail(each.logFile)).join('\n')}`);
  });
  await Promise.race([ready, exited]);
}

/** A real client_credentials grant for the admin API. */
async function machineToken(idp: IdentityProvider, client: TestClient): Promise<string> {
  const response = await fetch(`${idp.issuer}/oauth2/token`, {
    method: 'POST',
    headers: {
      authorization: basicAuthorization(client.clientId, client.clientSecret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      resource: idp.audience,
      scope: 'platforms:admin',
    }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (body.access_token === undefined) throw new Error(`no machine token: ${response.status}`);
  return body.access_token;
}
