import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { startGatewayUnderTest, type GatewayUnderTest } from '../testing/gateway-under-test.js';
import { changedTables, createDatabaseDigest, type DatabaseDigest } from './database-digest.js';
import {
  requestsOf,
  type Caller,
  type FuzzRequest,
  type OpenApiDocument,
} from './openapi-fuzz-inputs.js';

// Fuzzing of every operation in /openapi.json against the whole gateway (PostgreSQL, a real
// OpenID Provider), as an admin, a platform key, a user and nobody. Whatever is sent: no 5xx,
// every 4xx is the spec's `{ code, message, details? }` (or, for an operation that documents
// OAuth 2.0 error bodies, `{ error, error_description }`), and a refused write leaves every
// service table as it was. FUZZ_RUNS and FUZZ_SEED run it longer or otherwise.

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_501);
const READ_METHODS = new Set(['GET', 'HEAD']);
/**
 * deleteMyAccount deletes the user at the identity service, whose API the gateway under test
 * has no settings for (spec 7: 503 IDENTITY_SERVICE_NOT_CONFIGURED, a configuration answer,
 * not a fault), and a success would end the fuzzing user; account-api.test.ts covers it.
 */
const EXCLUDED = new Set(['deleteMyAccount']);

let t: GatewayUnderTest;
let document: OpenApiDocument;
let digest: DatabaseDigest;
const authorization: Record<Caller, string | undefined> = {
  admin: undefined,
  platform: undefined,
  user: undefined,
  anonymous: undefined,
};

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    { accounts: [{ accountId: 'fuzzer', email: 'fuzzer@example.test', emailVerified: true }] },
  );
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'SHOP',
      displayName: 'Shop',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/app',
          callbackUrl: 'http://localhost:3000/cb',
          isDefault: true,
        },
      ],
    },
  });
  expect(created.status).toBe(201);
  const key = await t.call('POST', '/v1/platforms/SHOP/credentials', { body: { kind: 'backend' } });
  expect(key.status).toBe(201);
  const { clientId, clientSecret } = key.body as { clientId: string; clientSecret: string };
  const userToken = (await t.provider.userTokens({ accountId: 'fuzzer' })).accessToken;
  authorization.admin = `Bearer ${t.adminToken}`;
  authorization.platform = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  authorization.user = `Bearer ${userToken}`;
  // The user's first request creates its local user and profile: done here, not by a refusal.
  expect((await t.call('GET', '/v1/profile/me', { token: userToken })).status).toBe(200);
  document = (await (await fetch(`${t.gateway.url}/openapi.json`)).json()) as OpenApiDocument;
  digest = await createDatabaseDigest(t.db);
});

afterAll(async () => {
  await t.close();
});

type Answer = { status: number; contentType: string; text: string };

async function send(request: FuzzRequest): Promise<Answer> {
  const headers: Record<string, string> = {};
  const credentials = authorization[request.caller];
  if (credentials !== undefined) headers.authorization = credentials;
  if (request.contentType !== undefined) headers['content-type'] = request.contentType;
  const response = await fetch(`${t.gateway.url}${request.target}`, {
    method: request.method,
    headers,
    redirect: 'manual',
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

/** What is wrong with an answer to `request`, or undefined. */
function problemOf(request: FuzzRequest, answer: Answer): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.text.slice(0, 200)}`;
  if (answer.status < 400 || request.method === 'HEAD') return undefined;
  if (!answer.contentType.startsWith('application/json')) {
    return `answered ${answer.status} as ${answer.contentType || 'no content type'}`;
  }
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  const oauth =
    body.error === 'invalid_request' &&
    typeof body.error_description === 'string' &&
    Object.keys(body).length === 2;
  const shaped =
    typeof body.code === 'string' &&
    typeof body.message === 'string' &&
    Object.keys(body).every((key) => ['code', 'message', 'details'].includes(key)) &&
    (body.details === undefined || (typeof body.details === 'object' && body.details !== null));
  // A path that names no operation (an empty segment) is the router's 404, in the spec's shape.
  const expected =
    request.errorBody === 'oauth' ? oauth || (answer.status === 404 && shaped) : shaped;
  return expected ? undefined : `answered ${answer.status} with the body ${answer.text}`;
}

describe('every operation of /openapi.json, fuzzed', () => {
  it(`answers ${RUNS} generated requests without 5xx, with the error body, writing nothing when it refuses (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(requestsOf(document, EXCLUDED), async (request) => {
        const write = !READ_METHODS.has(request.method);
        const before = write ? await digest() : undefined;
        const answer = await send(request);
        const problem = problemOf(request, answer);
        if (problem !== undefined) throw new Error(problem);
        if (before !== undefined && answer.status >= 400) {
          const changed = changedTables(before, await digest());
          if (changed.length > 0) {
            throw new Error(`refused with ${answer.status} yet changed ${changed.join(', ')}`);
          }
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  });
});
