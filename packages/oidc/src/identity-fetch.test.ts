import { describe, expect, it } from '@jest/globals';
import { allowsHttp } from './identity-fetch.js';

describe('allowsHttp (spec 2.4: HTTP only for localhost, 127.0.0.1, [::1], *.localhost)', () => {
  it.each([
    'http://localhost:8080/api/auth/env/PROD',
    'http://127.0.0.1:4000/idp',
    'http://[::1]:4000/idp',
    'http://id.localhost/tenant',
  ])('allows http for %s', (issuer) => {
    expect(allowsHttp(issuer)).toBe(true);
  });

  it.each([
    'http://id.example/tenant',
    'http://localhost.example/idp',
    'http://127.0.0.2/idp',
    'https://localhost/idp',
    'not a url',
  ])('does not for %s', (issuer) => {
    expect(allowsHttp(issuer)).toBe(false);
  });
});
