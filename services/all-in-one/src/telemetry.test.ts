import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import diagnosticsChannel from 'node:diagnostics_channel';
import { connectRedis } from '@gateway/db';
import { createLogger, startTelemetry, type Telemetry } from '@gateway/telemetry';
import { createMemoryLog, createMemorySpans } from '@gateway/telemetry/testing';
import { createTestRedis, unusedLocalPort, type TestRedis } from '@gateway/testkit';
import type { Redis } from 'ioredis';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import {
  basicAuthorization,
  handoffCodeOf,
  loginSteps,
  sessionCookieOf,
  type IssuedKey,
} from './testing/login-steps.js';

// One sign-in (start → provider → callback → exchange → introspect) seen
// through the in-memory span exporter, the gateway's log and the Prometheus endpoint.
const spans = createMemorySpans();
const log = createMemoryLog();
let telemetry: Telemetry;
let metricsPort: number;

type FinishedSpan = ReturnType<typeof spans.exporter.getFinishedSpans>[number];

/** What the token endpoint was sent and answered: the PKCE verifier and the ID token. */
const tokenEndpointTraffic: { verifiers: string[]; idTokens: string[] } = {
  verifiers: [],
  idTokens: [],
};
// The token request goes through @gateway/oidc's fetch for openid-client, which shows each
// form POST on a channel.
const formPostChannel = diagnosticsChannel.channel('gateway:oidc.form-post');
const onFormPost = (message: unknown) => {
  const { form, result } = message as {
    form: Record<string, string>;
    result: { answered: boolean; body?: unknown };
  };
  if (form.grant_type === undefined) return;
  if (form.code_verifier !== undefined) tokenEndpointTraffic.verifiers.push(form.code_verifier);
  const body = result.body as Record<string, unknown> | undefined;
  if (typeof body?.id_token === 'string') tokenEndpointTraffic.idTokens.push(body.id_token);
};

beforeAll(async () => {
  metricsPort = await unusedLocalPort();
  telemetry = startTelemetry({
    serviceName: 'gateway',
    spanProcessors: [spans.processor],
    metricsPort,
  });
  formPostChannel.subscribe(onFormPost);
});

afterAll(async () => {
  formPostChannel.unsubscribe(onFormPost);
  await telemetry.shutdown();
});

async function createShop(t: GatewayUnderTest): Promise<{ web: IssuedKey; backend: IssuedKey }> {
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'SHOP',
      displayName: 'Shop',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/',
          callbackUrl: 'http://localhost:3000/auth/callback',
          isDefault: true,
        },
      ],
    },
  });
  expect(created.status).toBe(201);
  const [web] = created.body.credentials as IssuedKey[];
  const backend = await t.call('POST', '/v1/platforms/SHOP/credentials', {
    body: { kind: 'backend' },
  });
  return {
    web: web as IssuedKey,
    backend: (backend.body.credentials as IssuedKey[])[0] as IssuedKey,
  };
}

/** Waits until a span of that name has ended (edge spans end after the response). */
async function spanNamed(name: string): Promise<FinishedSpan> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = spans.exporter.getFinishedSpans().find((span) => span.name === name);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no span named ${name}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The server span's service: `authflow`, `registry`, `onboarding` from `rpc.method`. */
function rpcServiceOf(span: FinishedSpan): string | undefined {
  const method = span.attributes['rpc.method'];
  return typeof method === 'string' && span.kind === 1 /* SERVER */
    ? method.split('.')[0]
    : undefined;
}

type SignIn = {
  startTrace: FinishedSpan[];
  callbackTrace: FinishedSpan[];
  secrets: Record<string, string>;
};

/** One sign-in with every step; answers the callback's trace and every secret it involved. */
async function signInOnce(t: GatewayUnderTest): Promise<SignIn> {
  const keys = await createShop(t);
  spans.exporter.reset();
  log.raw.length = 0;
  tokenEndpointTraffic.verifiers.length = 0;
  tokenEndpointTraffic.idTokens.length = 0;

  const steps = loginSteps(t);
  const { authorize, landed, callbackQuery } = await steps.signIn(t.provider, 'SHOP', '/orders');
  expect(landed.status).toBe(302);
  const handoffCode = handoffCodeOf(landed.location);
  expect(handoffCode).toMatch(/^handoff_/);
  const exchanged = await steps.exchange(keys.web, handoffCode);
  expect(exchanged.status).toBe(200);
  // Spec 3.2: a used code is refused, as is an unknown one.
  expect((await steps.exchange(keys.web, handoffCode)).status).toBe(404);
  expect((await steps.exchange(keys.web, `handoff_${'x'.repeat(43)}`)).status).toBe(404);
  const session = exchanged.body.session as { gatewayToken: string };
  const introspected = await steps.introspect(keys.backend, session.gatewayToken);
  expect(introspected.body.active).toBe(true);
  await steps.introspect(keys.backend, 'not-a-session-token-of-anyone');

  const start = await spanNamed('startAuthentication');
  const callback = await spanNamed('handleIdentityCallback');
  await spanNamed('introspectGatewaySession');
  const traceOf = (root: FinishedSpan) =>
    spans.exporter
      .getFinishedSpans()
      .filter((span) => span.spanContext().traceId === root.spanContext().traceId);
  const startTrace = traceOf(start);
  const callbackTrace = traceOf(callback);

  expect(tokenEndpointTraffic.verifiers).toHaveLength(1);
  expect(tokenEndpointTraffic.idTokens).toHaveLength(1);
  const gatewayClient = t.provider.clients.find((client) => client.clientId === 'test-gateway');
  const secrets: Record<string, string> = {
    state: authorize.searchParams.get('state') ?? 'missing state',
    nonce: authorize.searchParams.get('nonce') ?? 'missing nonce',
    providerCode: new URLSearchParams(callbackQuery).get('code') ?? 'missing code',
    handoffCode,
    gatewayToken: session.gatewayToken,
    sessionCookie: sessionCookieOf(landed.headers).token,
    idToken: tokenEndpointTraffic.idTokens[0] ?? 'missing id token',
    pkceVerifier: tokenEndpointTraffic.verifiers[0] ?? 'missing verifier',
    webClientSecret: keys.web.clientSecret,
    backendClientSecret: keys.backend.clientSecret,
    webBasic: basicAuthorization(keys.web).slice('Basic '.length),
    backendBasic: basicAuthorization(keys.backend).slice('Basic '.length),
    gatewayClientSecret: gatewayClient?.clientSecret ?? 'missing client secret',
    environmentSecretKey: 'a-secret-key-of-at-least-32-characters!!',
    encryptionKeys: t.config.encryptionKeys ?? 'missing keys',
    adminToken: t.adminToken,
  };
  return { startTrace, callbackTrace, secrets };
}

/** Every span's name, attributes, status, events (and their attributes), as one text. */
function allSpanText(): string {
  return JSON.stringify(
    spans.exporter.getFinishedSpans().map((span) => ({
      name: span.name,
      attributes: span.attributes,
      status: span.status,
      events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
      links: span.links.map((link) => link.attributes),
    })),
  );
}

/**
 * Spec 2.6, 4.6: logout hands the identity provider, as id_token_hint, the very ID token its
 * token endpoint issued for this sign-in (the session keeps it sealed and packed).
 * Runs last in its block: it ends the session.
 */
async function expectLogoutHintIsTheIssuedIdToken(t: GatewayUnderTest, signIn: SignIn) {
  const cookie = `svc_auth_session=${encodeURIComponent(signIn.secrets.gatewayToken ?? '')}`;
  const { status, body } = await t.call('POST', '/v1/auth/logout', {
    token: null,
    headers: { cookie, origin: 'http://localhost:3000' },
  });
  expect(status).toBe(200);
  const hint = new URL(String(body.logoutUrl)).searchParams.get('id_token_hint');
  expect(hint).toBe(signIn.secrets.idToken);
}

function expectNoSecrets(secrets: Record<string, string>): void {
  const spanText = allSpanText();
  const logText = log.raw.join('\n');
  expect(log.raw.length).toBeGreaterThan(0);
  for (const [name, value] of Object.entries(secrets)) {
    expect(value.length).toBeGreaterThanOrEqual(8);
    expect({ name, inSpans: spanText.includes(value) }).toEqual({ name, inSpans: false });
    expect({ name, inLog: logText.includes(value) }).toEqual({ name, inLog: false });
  }
}

function expectOneConnectedTrace(
  trace: FinishedSpan[],
  root: string = 'handleIdentityCallback',
): void {
  const ids = new Set(trace.map((span) => span.spanContext().spanId));
  const roots = trace.filter((span) => span.parentSpanContext === undefined);
  expect(roots.map((span) => span.name)).toEqual([root]);
  for (const span of trace) {
    if (span.parentSpanContext === undefined) continue;
    expect({ span: span.name, parentInTrace: ids.has(span.parentSpanContext.spanId) }).toEqual({
      span: span.name,
      parentInTrace: true,
    });
  }
}

describe('one sign-in with the login state in PostgreSQL', () => {
  let t: GatewayUnderTest;
  let signIn: SignIn;

  beforeAll(async () => {
    t = await startGatewayUnderTest(
      { LOG_LEVEL: 'trace' },
      {},
      {
        logger: createLogger({ service: 'gateway', level: 'trace', destination: log.destination }),
      },
    );
    signIn = await signInOnce(t);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('yields one trace per step from the edge through auth-flow, registry and onboarding', () => {
    const servicesOf = (steps: FinishedSpan[]) =>
      [...new Set(steps.map(rpcServiceOf).filter((name) => name !== undefined))].sort();
    // Start asks the registry; its answers are then kept until a registry change, so the
    // callback's only registry call writes the sign-in's audit record.
    expectOneConnectedTrace(signIn.startTrace, 'startAuthentication');
    expect(servicesOf(signIn.startTrace)).toEqual(['authflow', 'registry']);
    const trace = signIn.callbackTrace;
    expectOneConnectedTrace(trace);
    expect(servicesOf(trace)).toEqual(['authflow', 'onboarding', 'registry']);
    expect(
      trace.filter((span) => rpcServiceOf(span) === 'registry').map((span) => span.name),
    ).toEqual(['registry.v1.RegistryService/AppendAuditRecord']);
    // One onboarding call per callback, which also applies the identity claims.
    expect(
      trace.filter((span) => rpcServiceOf(span) === 'onboarding').map((span) => span.name),
    ).toEqual(['onboarding.v1.OnboardingService/BootstrapMembership']);
    const names = trace.map((span) => span.name);
    expect(names).toContain('authflow.v1.AuthFlowService/CompleteLogin');
    expect(names).toContain('pg.query');
    expect(names).toContain('oidc.token');
    const token = trace.find((span) => span.name === 'oidc.token');
    expect(token?.attributes['url.path']).toEqual(expect.any(String));
    const query = trace.find((span) => span.name === 'pg.query');
    expect(query?.attributes).toEqual({
      'db.system.name': 'postgresql',
      'db.operation.name': expect.stringMatching(/^[A-Z]+$/),
    });
  });

  it('never puts a token, code or secret into a span or a log line', () => {
    expectNoSecrets(signIn.secrets);
  });

  it('serves the metrics on the Prometheus port', async () => {
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    const lines = text.split('\n');
    const has = (pattern: RegExp) => lines.some((line) => pattern.test(line));
    expect(
      has(
        /^gateway_http_server_duration\w*_bucket\{.*operation="handleIdentityCallback".*status_code="302"/,
      ),
    ).toBe(true);
    expect(
      has(/^gateway_http_server_duration\w*_count\{.*operation="exchangeAuthenticationHandoff"/),
    ).toBe(true);
    expect(has(/^gateway_signin_outcomes_total\{.*outcome="handoff".* 1$/)).toBe(true);
    expect(has(/^gateway_handoff_redemptions_total\{.*result="redeemed".* 1$/)).toBe(true);
    expect(has(/^gateway_handoff_redemptions_total\{.*result="refused".* 2$/)).toBe(true);
    expect(has(/^gateway_introspect_results_total\{.*active="true".* 1$/)).toBe(true);
    expect(has(/^gateway_introspect_results_total\{.*active="false".* 1$/)).toBe(true);
    // Nothing failed: the dependency error counter has no series yet.
    expect(has(/^gateway_dependency_errors_total\{/)).toBe(false);
  });

  it('logs out with the issued ID token as id_token_hint (SQL store)', async () => {
    await expectLogoutHintIsTheIssuedIdToken(t, signIn);
  });
});

describe('one sign-in with the login state in Redis', () => {
  let t: GatewayUnderTest;
  let testRedis: TestRedis;
  let redis: Redis;
  let signIn: SignIn;

  beforeAll(async () => {
    testRedis = await createTestRedis();
    redis = await connectRedis({
      url: testRedis.url,
      keyPrefix: testRedis.keyPrefix,
      timeoutMs: 2_000,
    });
    t = await startGatewayUnderTest(
      {},
      {},
      {
        logger: createLogger({ service: 'gateway', level: 'trace', destination: log.destination }),
        redis,
      },
    );
    signIn = await signInOnce(t);
  });

  afterAll(async () => {
    await t?.close();
    redis?.disconnect();
    await testRedis?.cleanup();
  });

  it('has Redis command spans in the callback trace, with the command name only', () => {
    const trace = signIn.callbackTrace;
    expectOneConnectedTrace(trace);
    const redisSpans = trace.filter((span) => span.name.startsWith('redis.'));
    expect(redisSpans.length).toBeGreaterThan(0);
    for (const span of redisSpans) {
      expect(Object.keys(span.attributes).sort()).toEqual(
        span.attributes['error.type'] === undefined
          ? ['db.operation.name', 'db.system.name']
          : ['db.operation.name', 'db.system.name', 'error.type'],
      );
    }
    expect(trace.map((span) => span.name)).toContain('oidc.token');
  });

  it('never puts a token, code or secret into a span or a log line', () => {
    expectNoSecrets(signIn.secrets);
  });

  it('logs out with the issued ID token as id_token_hint (Redis store: bytes after the text)', async () => {
    await expectLogoutHintIsTheIssuedIdToken(t, signIn);
  });
});
