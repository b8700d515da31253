import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { DevSigningAlg, DevStore } from './dev-identity-options.js';

/**
 * The private signing keys of every issuer of the service. Kept in `store` when there is
 * one, so tokens and the JWKS stay the same across restarts; a key for `alg` is created (and
 * saved) when the store holds none.
 */
export async function loadSigningKeys(
  alg: DevSigningAlg,
  store: DevStore<JWK> | undefined,
): Promise<JWK[]> {
  const stored = (await store?.load()) ?? [];
  stored.forEach((key, index) => {
    if (typeof key.kid !== 'string' || typeof key.alg !== 'string' || key.d === undefined) {
      throw new Error(`keyStore: key ${index} is not a private JWK with kid and alg`);
    }
  });
  if (stored.some((key) => key.alg === alg)) return stored;
  const keys = [...stored, await createSigningKey(alg)];
  await store?.save(keys);
  return keys;
}

async function createSigningKey(alg: DevSigningAlg): Promise<JWK> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
  return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
}
