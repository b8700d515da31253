import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, type JWTPayload } from 'jose';
import {
  createTestSigningKey,
  type TestSigningAlg,
  type TestSigningKey,
} from './test-signing-key.js';

export type TestTokenIssuer = {
  issuer: string;
  jwksUri: string;
  /** The key `sign` uses by default: the first published one. */
  readonly key: TestSigningKey;
  /** Replaces the published JWKS (rotation); the first key becomes the default. */
  publish(keys: TestSigningKey[]): void;
  /**
   * Signs any claims. `iss` (this issuer), `iat` (now) and `exp` (in 5 minutes) are filled
   * in unless given; pass `undefined` to leave one out. `kid: null` leaves the kid out.
   */
  sign(
    claims: JWTPayload,
    options?: { key?: TestSigningKey; kid?: string | null; typ?: string },
  ): Promise<string>;
  /** How many times jwks_uri has been fetched. */
  jwksRequests(): number;
  close(): Promise<void>;
};

/**
 * A minimal token issuer whose keys the test controls: it serves a discovery document and a
 * JWKS, and signs whatever it is asked to (expired, not yet valid, ID tokens, unknown kid).
 * It plays an identity provider, or an attacker, where a real provider cannot be made to
 * misbehave.
 */
export async function startTestTokenIssuer(
  options: { alg?: TestSigningAlg; path?: string } = {},
): Promise<TestTokenIssuer> {
  let published = [await createTestSigningKey(options.alg ?? 'ES256')];
  let jwksRequests = 0;
  const path = options.path ?? '/issuer';
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === `${path}/.well-known/openid-configuration`) {
      send(200, {
        issuer,
        jwks_uri: `${issuer}/jwks`,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        end_session_endpoint: `${issuer}/logout`,
      });
    } else if (req.method === 'GET' && req.url === `${path}/jwks`) {
      jwksRequests += 1;
      send(200, { keys: published.map((key) => key.publicJwk) });
    } else {
      send(404, { error: 'not_found' });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    get key() {
      return published[0] as TestSigningKey;
    },
    publish(keys) {
      if (keys.length === 0) throw new Error('publish at least one key');
      published = [...keys];
    },
    async sign(claims, signOptions = {}) {
      const key = signOptions.key ?? (published[0] as TestSigningKey);
      const now = Math.floor(Date.now() / 1000);
      const kid = signOptions.kid === undefined ? key.kid : signOptions.kid;
      return new SignJWT({ iss: issuer, iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({
          alg: key.alg,
          ...(kid === null ? {} : { kid }),
          ...(signOptions.typ === undefined ? {} : { typ: signOptions.typ }),
        })
        .sign(key.privateKey);
    },
    jwksRequests: () => jwksRequests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
