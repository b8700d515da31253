import { describe, expect, it } from '@jest/globals';
import {
  isLoginOfThisBrowser,
  loginNonceOf,
  takeLoginNonce,
  withLoginNonce,
} from './login-binding.js';

describe('the login nonce in returnTo', () => {
  it('adds the nonce as the last query parameter and takes it off again', () => {
    for (const returnTo of ['/', 'https://shop.example/orders', 'https://shop.example/o?a=1&b=']) {
      const carried = withLoginNonce(returnTo, 'n0nce_-');
      expect(takeLoginNonce(carried)).toEqual({ nonce: 'n0nce_-', returnTo });
    }
  });

  it('finds no nonce in a returnTo without one, or with it before other parameters', () => {
    expect(takeLoginNonce('https://shop.example/orders')).toBeUndefined();
    expect(takeLoginNonce('https://shop.example/?gw_login_nonce=abc&x=1')).toBeUndefined();
    expect(takeLoginNonce('https://shop.example/?my_gw_login_nonce=abc')).toBeUndefined();
  });

  it('accepts the hash of this browser secret only', () => {
    const secret = 'a-secret-of-this-browser';
    expect(isLoginOfThisBrowser(loginNonceOf(secret), secret)).toBe(true);
    expect(isLoginOfThisBrowser(loginNonceOf('another'), secret)).toBe(false);
    expect(isLoginOfThisBrowser(secret, secret)).toBe(false);
    expect(isLoginOfThisBrowser('', secret)).toBe(false);
  });
});
