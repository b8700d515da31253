import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { adminClientId } from '@gateway/dev-identity';
import { clientCredentialsToken } from '@gateway/oidc';

/** A BFF key as the admin API issues it (spec 4.10, credential responses). */
export type DemoPlatformKey = {
  platformKey: string;
  redirectPairId: string;
  credentialId: string;
  clientId: string;
  clientSecret: string;
};

type IssuedCredential = {
  id: string;
  kind: 'bff' | 'backend';
  redirectPairId: string | null;
  clientId: string;
  clientSecret: string;
};
type RedirectPair = {
  id?: string;
  label: string;
  returnUrl: string;
  callbackUrl: string;
  isDefault: boolean;
};
type PlatformView = {
  platformKey: string;
  status: 'active' | 'inactive' | 'archived';
  redirectPairs: (RedirectPair & { id: string })[];
  credentials: { id: string; kind: 'bff' | 'backend'; redirectPairId: string | null }[];
};
type CredentialResponse = { platform: PlatformView; credentials: IssuedCredential[] };

export type DemoPlatformSeed = {
  key: DemoPlatformKey;
  /** What the seeding did, for the start banner and tests. */
  actions: ('created-platform' | 'reactivated-platform' | 'moved-redirect-pair' | 'issued-key')[];
};

/**
 * The first run's demo platform, registered the way an admin would (spec 4.10), never by
 * writing to the database around the API:
 *
 * - an admin token from the development identity service's machine client `gateway-admin`
 *   (client_credentials, `resource` = IDENTITY_ACCESS_TOKEN_AUDIENCE, spec 5);
 * - the platform is created when it does not exist, reactivated when an admin deactivated
 *   or archived it, and its redirect pair is moved in place when the demo platform now
 *   listens elsewhere (DEMO_PLATFORM_PORT changed);
 * - its BFF key is shown once by the gateway, so it is kept in `keyFile` (mode 0600) and
 *   reused while the gateway still accepts it; a lost or refused key is replaced through the
 *   admin API (the pair's key rotated, or a key issued when the pair has none).
 */
type DemoPlatformOptions = {
  gatewayUrl: string;
  adminClientSecret: string;
  /** IDENTITY_ACCESS_TOKEN_AUDIENCE: the `resource` of the admin token request. */
  accessTokenAudience: string;
  platformKey: string;
  displayName: string;
  /** The demo platform's origin; its redirect pair is `<origin>/` + `<origin>/auth/callback`. */
  publicOrigin: string;
  keyFile: string;
  fetch?: typeof fetch;
};

export async function ensureDemoPlatform(options: DemoPlatformOptions): Promise<DemoPlatformSeed> {
  const doFetch = options.fetch ?? fetch;
  const actions: DemoPlatformSeed['actions'] = [];
  const pair: RedirectPair = {
    label: 'web',
    returnUrl: `${options.publicOrigin}/`,
    callbackUrl: `${options.publicOrigin}/auth/callback`,
    isDefault: true,
  };
  const api = createAdminApi(options.gatewayUrl, await adminToken(options, doFetch), doFetch);
  const path = `/v1/platforms/${encodeURIComponent(options.platformKey)}`;
  const { platform, issued } = await registeredPlatform(api, path, options, pair, actions);
  const target = matchingPair(platform, pair);
  if (target === undefined) {
    throw new Error(`the gateway did not keep the redirect pair ${pair.returnUrl} of ${path}`);
  }

  const keyOf = (credential: IssuedCredential): DemoPlatformKey => ({
    platformKey: platform.platformKey,
    redirectPairId: target.id,
    credentialId: credential.id,
    clientId: credential.clientId,
    clientSecret: credential.clientSecret,
  });
  const fresh = issued.find((c) => c.kind === 'bff' && c.redirectPairId === target.id);
  let key: DemoPlatformKey | undefined = fresh === undefined ? undefined : keyOf(fresh);
  if (key === undefined) {
    const stored = await readStoredKey(options.keyFile);
    if (
      stored !== undefined &&
      stored.platformKey === platform.platformKey &&
      stored.redirectPairId === target.id &&
      platform.credentials.some((c) => c.id === stored.credentialId) &&
      (await gatewayAcceptsKey(options.gatewayUrl, stored, doFetch))
    ) {
      return { key: stored, actions };
    }
    key = keyOf(await replacementKey(api, path, platform, target.id));
  }
  actions.push('issued-key');
  await writeStoredKey(options.keyFile, key);
  return { key, actions };
}

type AdminApi = ReturnType<typeof createAdminApi>;

/**
 * The demo platform as the gateway now has it: created when missing, else reactivated when
 * needed and its default pair moved to `pair`; with any keys issued on the way.
 */
async function registeredPlatform(
  api: AdminApi,
  path: string,
  options: Pick<DemoPlatformOptions, 'platformKey' | 'displayName'>,
  pair: RedirectPair,
  actions: DemoPlatformSeed['actions'],
): Promise<{ platform: PlatformView; issued: IssuedCredential[] }> {
  const existing = await api.call('GET', path, undefined, [200, 404]);
  if (existing.status === 404) {
    // central mode with central onboarding on: platform fields an admin adds for DEMO are
    // collected on the identity UI's onboarding page before the handoff (spec 1).
    const created = (
      await api.call(
        'POST',
        '/v1/platforms',
        {
          platformKey: options.platformKey,
          displayName: options.displayName,
          redirectPairs: [pair],
          defaultOnboardingMode: 'central',
          centralOnboardingEnabled: true,
          metadata: { createdBy: 'pnpm start (first run)' },
        },
        [201],
      )
    ).body as CredentialResponse;
    actions.push('created-platform');
    return { platform: created.platform, issued: created.credentials };
  }
  let platform = existing.body as PlatformView;
  if (platform.status !== 'active') {
    if (platform.status === 'archived') await api.call('POST', `${path}/restore`, {}, [200]);
    platform = (await api.call('POST', `${path}/activate`, {}, [200])).body as PlatformView;
    actions.push('reactivated-platform');
  }
  if (matchingPair(platform, pair) !== undefined) return { platform, issued: [] };
  // The default pair is updated in place (same id, so its key stays); other pairs an admin
  // added are sent back unchanged (omitted pairs would be deleted).
  const updated = (
    await api.call(
      'PATCH',
      path,
      {
        redirectPairs: platform.redirectPairs.map((existingPair) =>
          existingPair.isDefault ? { ...pair, id: existingPair.id } : existingPair,
        ),
      },
      [200],
    )
  ).body as CredentialResponse;
  actions.push('moved-redirect-pair');
  return { platform: updated.platform, issued: updated.credentials };
}

/** A new BFF key for the pair: the pair's key rotated, or a key issued when it has none. */
async function replacementKey(
  api: AdminApi,
  path: string,
  platform: PlatformView,
  redirectPairId: string,
): Promise<IssuedCredential> {
  const current = platform.credentials.find(
    (c) => c.kind === 'bff' && c.redirectPairId === redirectPairId,
  );
  const response = (
    current === undefined
      ? await api.call('POST', `${path}/credentials`, { kind: 'bff', redirectPairId }, [201])
      : await api.call(
          'POST',
          `${path}/credentials/${encodeURIComponent(current.id)}/rotate`,
          { revokePreviousImmediately: true },
          [200],
        )
  ).body as CredentialResponse;
  const replacement = response.credentials.find((c) => c.redirectPairId === redirectPairId);
  if (replacement === undefined) throw new Error(`the gateway issued no key for ${path}`);
  return replacement;
}

/** The registry keeps a return URL root without its trailing slash (spec 2.2). */
function matchingPair(platform: PlatformView, pair: RedirectPair) {
  const root = (url: string) => url.replace(/\/+$/, '');
  return platform.redirectPairs.find(
    (candidate) =>
      root(candidate.returnUrl) === root(pair.returnUrl) &&
      new URL(candidate.callbackUrl).href === new URL(pair.callbackUrl).href,
  );
}

/** spec 5: a deployment-environment machine token with `platforms:admin`. */
async function adminToken(
  options: { gatewayUrl: string; adminClientSecret: string; accessTokenAudience: string },
  doFetch: typeof fetch,
): Promise<string> {
  // The development identity service runs on the gateway's origin in the embedded default.
  const issuer = `${options.gatewayUrl}/api/auth/env/PROD`;
  return clientCredentialsToken({
    issuer,
    tokenEndpoint: `${issuer}/oauth2/token`,
    clientId: adminClientId,
    clientSecret: options.adminClientSecret,
    parameters: { scope: 'platforms:admin', resource: options.accessTokenAudience },
    fetch: doFetch,
  });
}

function createAdminApi(gatewayUrl: string, token: string, doFetch: typeof fetch) {
  return {
    async call(
      method: string,
      path: string,
      body: unknown,
      expected: readonly number[],
    ): Promise<{ status: number; body: unknown }> {
      const response = await doFetch(`${gatewayUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      const parsed: unknown = text === '' ? undefined : JSON.parse(text);
      if (!expected.includes(response.status)) {
        const code = (parsed as { code?: unknown } | undefined)?.code;
        throw new Error(
          `${method} ${path} answered ${response.status}${typeof code === 'string' ? ` ${code}` : ''}`,
        );
      }
      return { status: response.status, body: parsed };
    },
  };
}

/**
 * Whether the gateway still takes the stored key: introspecting an unknown token answers
 * 200 `{ active: false }` to a valid platform key and 401 to a wrong one (spec 4.5).
 */
async function gatewayAcceptsKey(
  gatewayUrl: string,
  key: DemoPlatformKey,
  doFetch: typeof fetch,
): Promise<boolean> {
  const response = await doFetch(`${gatewayUrl}/v1/auth/introspect`, {
    method: 'POST',
    headers: {
      authorization: basic(key.clientId, key.clientSecret),
      'content-type': 'application/json',
    },
    body: JSON.stringify({ token: 'first-run-key-check' }),
  });
  await response.body?.cancel();
  if (response.status === 200) return true;
  if (response.status === 401) return false;
  throw new Error(`checking the stored demo platform key answered ${response.status}`);
}

async function readStoredKey(file: string): Promise<DemoPlatformKey | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<DemoPlatformKey>;
    const fields = ['platformKey', 'redirectPairId', 'credentialId', 'clientId', 'clientSecret'];
    return fields.every((field) => typeof parsed[field as keyof DemoPlatformKey] === 'string')
      ? (parsed as DemoPlatformKey)
      : undefined;
  } catch {
    return undefined; // unreadable: a new key is issued and the file rewritten
  }
}

/** Written to a temporary file first, so a crash never leaves half a key behind. */
async function writeStoredKey(file: string, key: DemoPlatformKey): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
}

function basic(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
}
