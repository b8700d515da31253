import { calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';

/** The signature algorithms the gateway accepts on access tokens (spec 5). */
export type TestSigningAlg = 'EdDSA' | 'RS256' | 'ES256';

export type TestSigningKey = {
  kid: string;
  alg: TestSigningAlg;
  privateKey: CryptoKey;
  /** The private key as a JWK, with kid, alg and use. */
  privateJwk: JWK;
  /** The public half as it is published in a JWKS: kty, key material, kid, alg, use. */
  publicJwk: JWK;
};

/**
 * A fresh asymmetric signing key. The kid is the key's JWK thumbprint unless one is given,
 * so two keys can deliberately share a kid (a forged token that names a published key).
 */
export async function createTestSigningKey(
  alg: TestSigningAlg = 'RS256',
  options: { kid?: string } = {},
): Promise<TestSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = options.kid ?? (await calculateJwkThumbprint(publicJwk));
  const meta = { kid, alg, use: 'sig' };
  return {
    kid,
    alg,
    privateKey,
    privateJwk: { ...(await exportJWK(privateKey)), ...meta },
    publicJwk: { ...publicJwk, ...meta },
  };
}
