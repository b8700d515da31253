import { describe, expect, it } from '@jest/globals';
import { hashToken, randomToken, verifyTokenAgainstHash } from '@gateway/crypto';
import { nonceOf } from './identity-provider-client.js';

// Spec 2.8: the transaction holds only the nonce's hash; the callback derives the nonce again
// from the login's PKCE verifier and its id.
describe('nonceOf', () => {
  it('is the same for the same login, so the callback can hand openid-client the nonce', () => {
    const verifier = randomToken();
    const nonce = nonceOf(verifier, 'transaction-1');
    expect(nonceOf(verifier, 'transaction-1')).toBe(nonce);
    expect(verifyTokenAgainstHash(nonceOf(verifier, 'transaction-1'), hashToken(nonce))).toBe(true);
  });

  it('differs for another login or another verifier, and shows neither', () => {
    const verifier = randomToken();
    const nonce = nonceOf(verifier, 'transaction-1');
    expect(nonceOf(verifier, 'transaction-2')).not.toBe(nonce);
    expect(nonceOf(randomToken(), 'transaction-1')).not.toBe(nonce);
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(nonce).not.toContain(verifier);
  });
});
