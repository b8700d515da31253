import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { RegistryService } from '@gateway/contracts';
import { createLocalChangeFeed } from '@gateway/db';
import { createErrorInterceptor, GatewayError } from '@gateway/errors';
import {
  CREDENTIAL_CACHE_TTL_MS,
  createPlatformCredentialVerifier,
  parseBasicCredentials,
  UNKNOWN_CLIENT_ID_TTL_MS,
} from './basic-credentials.js';

// Parsing of `Authorization: Basic` for platform credentials (RFC 7617, RFC 6749 section
// 2.3.1), and what the verifier keeps of the registry's answers per client id, on a clock of
// the test's. Verification over HTTP is tested in routes/auth-routes.test.ts.

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('parseBasicCredentials', () => {
  it.each([
    ['plain credentials', basic('gwc_a:gws_b'), 'gwc_a', 'gws_b'],
    ['a lower-case scheme', basic('gwc_a:gws_b').replace('Basic', 'basic'), 'gwc_a', 'gws_b'],
    [
      'missing padding',
      'Basic ' + Buffer.from('ab:c').toString('base64').replace(/=+$/, ''),
      'ab',
      'c',
    ],
    ['a colon in the secret', basic('gwc_a:b:c'), 'gwc_a', 'b:c'],
    ['percent-encoded parts', basic('id%3Ax%20y:s%25%3A'), 'id:x y', 's%:'],
    ['a literal +, kept as it is', basic('id+1:s+2'), 'id+1', 's+2'],
    ['UTF-8', basic('ïd:sécret'), 'ïd', 'sécret'],
  ])('reads %s', (_name, header, clientId, clientSecret) => {
    expect(parseBasicCredentials(header)).toEqual({ clientId, clientSecret });
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another scheme', 'Bearer abc'],
    ['the scheme alone', 'Basic'],
    ['two tokens', `${basic('a:b')} ${basic('c:d')}`],
    ['characters outside base64', 'Basic a:b'],
    ['no colon', basic('gwc_a')],
    ['an empty id', basic(':s')],
    ['an empty secret', basic('id:')],
    ['a malformed escape', basic('id:%E0%A4%A')],
    ['invalid UTF-8', `Basic ${Buffer.from([0x61, 0x3a, 0xc3]).toString('base64')}`],
    ['a control character', basic('id:s\n')],
    ['an encoded control character', basic('id:%00')],
    ['an id over 256 characters', basic(`${'a'.repeat(257)}:s`)],
    ['a header over 2048 characters', basic(`id:${'s'.repeat(2000)}`)],
  ])('refuses %s with UNAUTHORIZED', (_name, header) => {
    let failure: unknown;
    try {
      parseBasicCredentials(header);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).code).toBe('UNAUTHORIZED');
  });
});

describe('createPlatformCredentialVerifier', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
  const GRACE_ENDS = 50_000;

  /** A registry stand-in answering as VerifyPlatformCredential does, counting its calls. */
  function verifierAt(clock: { now: number }) {
    const calls: string[] = [];
    const registry = createClient(
      RegistryService,
      createRouterTransport(
        ({ service }) =>
          service(RegistryService, {
            verifyPlatformCredential(request) {
              calls.push(request.clientId);
              if (request.clientId !== 'gwc_known') {
                throw new GatewayError('UNAUTHORIZED', 'Invalid platform credentials.');
              }
              return {
                credentialId: 'c1',
                kind: 'backend',
                platformKey: 'SHOP',
                platformActive: true,
                secretMatches: ['gws_new', 'gws_old'].includes(request.clientSecret),
                secretHash: sha256('gws_new'),
                previousSecretHash: sha256('gws_old'),
                previousSecretExpiresAtMs: BigInt(GRACE_ENDS),
              };
            },
          }),
        // As the services answer: a GatewayError crosses with its code.
        { router: { interceptors: [createErrorInterceptor({ onUnexpected: () => undefined })] } },
      ),
    );
    const feed = createLocalChangeFeed();
    const verifier = createPlatformCredentialVerifier(registry, { feed, now: () => clock.now });
    const outcome = (id: string, secret: string) =>
      verifier.verify(basic(`${id}:${secret}`)).then(
        (caller) => caller.platformKey,
        (error: unknown) => (error as GatewayError).code,
      );
    return { calls, feed, outcome };
  }

  it('checks the current and, until its grace period ends, the previous secret itself', async () => {
    const clock = { now: 0 };
    const { calls, outcome } = verifierAt(clock);
    expect(await outcome('gwc_known', 'gws_new')).toBe('SHOP');
    expect(await outcome('gwc_known', 'gws_old')).toBe('SHOP');
    expect(await outcome('gwc_known', 'gws_wrong')).toBe('UNAUTHORIZED');
    expect(await outcome('gwc_made_up', 'gws_new')).toBe('UNAUTHORIZED');
    expect(calls).toEqual(['gwc_known', 'gwc_made_up']);
    // Past the grace period (still within the 10 s the knowledge is kept).
    clock.now = GRACE_ENDS - 1;
    const { calls: later, outcome: laterOutcome } = verifierAt(clock);
    await laterOutcome('gwc_known', 'gws_new');
    clock.now = GRACE_ENDS + 1;
    expect(await laterOutcome('gwc_known', 'gws_old')).toBe('UNAUTHORIZED');
    expect(later).toHaveLength(1);
  });

  it('asks again for a known client id after 10 s, for an unknown one after the window', async () => {
    const clock = { now: 0 };
    const { calls, outcome } = verifierAt(clock);
    await outcome('gwc_known', 'gws_wrong');
    await outcome('gwc_made_up', 'x');
    clock.now = CREDENTIAL_CACHE_TTL_MS + 1;
    await outcome('gwc_known', 'gws_wrong');
    await outcome('gwc_made_up', 'y');
    expect(calls).toEqual(['gwc_known', 'gwc_made_up', 'gwc_known']);
    clock.now = UNKNOWN_CLIENT_ID_TTL_MS + 1;
    await outcome('gwc_made_up', 'z');
    expect(calls).toEqual(['gwc_known', 'gwc_made_up', 'gwc_known', 'gwc_made_up']);
  });

  it('forgets everything when a registry change is announced', async () => {
    const { calls, feed, outcome } = verifierAt({ now: 0 });
    await outcome('gwc_known', 'gws_new');
    await outcome('gwc_made_up', 'x');
    await feed.announce();
    await outcome('gwc_known', 'gws_new');
    await outcome('gwc_made_up', 'x');
    expect(calls).toEqual(['gwc_known', 'gwc_made_up', 'gwc_known', 'gwc_made_up']);
  });
});
