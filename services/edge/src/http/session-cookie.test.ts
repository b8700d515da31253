import { describe, expect, it } from '@jest/globals';
import type { Request, Response } from 'express';
import {
  clearSessionCookie,
  readCookie,
  readSessionToken,
  setSessionCookie,
} from './session-cookie.js';

// The cookie module on its own: parsing without a library, and the attributes of spec 4.2
// step 7 and 4.6. The routes' use of it is tested over HTTP in routes/auth-routes.test.ts.

function requestWith(cookie: string | undefined): Request {
  return { headers: cookie === undefined ? {} : { cookie } } as Request;
}

/** Just enough of a Response for the Set-Cookie header. */
function fakeResponse(): Response & { cookies(): string[] } {
  const headers = new Map<string, unknown>();
  const res = {
    getHeader: (name: string) => headers.get(name.toLowerCase()),
    setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), value),
    cookies: () => {
      const value = headers.get('set-cookie');
      return Array.isArray(value) ? value.map(String) : [];
    },
  };
  return res as unknown as Response & { cookies(): string[] };
}

describe('readCookie', () => {
  it.each([
    ['a single cookie', 'svc_auth_session=abc', 'abc'],
    ['among others', 'a=1; svc_auth_session=abc; b=2', 'abc'],
    ['without spaces', 'a=1;svc_auth_session=abc;b=2', 'abc'],
    ['the first of duplicates', 'svc_auth_session=one; svc_auth_session=two', 'one'],
    ['a quoted value', 'svc_auth_session="abc"', 'abc'],
    ['a value containing =', 'svc_auth_session=a=b==', 'a=b=='],
    ['a name that only ends like it', 'x_svc_auth_session=abc', undefined],
    ['no cookie of that name', 'a=1; b=2', undefined],
    ['a pair without =', 'svc_auth_session', undefined],
  ])('reads %s', (_name, header, expected) => {
    expect(readCookie(header, 'svc_auth_session')).toBe(expected);
  });

  it('reads nothing from an absent header', () => {
    expect(readCookie(undefined, 'svc_auth_session')).toBeUndefined();
  });
});

describe('readSessionToken', () => {
  it('URL-decodes the token', () => {
    expect(readSessionToken(requestWith('svc_auth_session=a%2Fb%2Bc%3D'))).toBe('a/b+c=');
  });

  it('takes a raw token as it is', () => {
    expect(readSessionToken(requestWith('svc_auth_session=gst_abc-123'))).toBe('gst_abc-123');
  });

  it.each([
    ['no header', undefined],
    ['an empty value', 'svc_auth_session='],
    ['an empty quoted value', 'svc_auth_session=""'],
    ['a malformed escape', 'svc_auth_session=%zz'],
    ['a value longer than 512 characters', `svc_auth_session=${'a'.repeat(513)}`],
  ])('reads no session from %s', (_name, header) => {
    expect(readSessionToken(requestWith(header))).toBeUndefined();
  });
});

describe('setSessionCookie and clearSessionCookie', () => {
  const now = Date.parse('2030-01-01T00:00:00.000Z');

  it('sets the encoded token with HttpOnly, Path=/, SameSite=Lax and Max-Age', () => {
    const res = fakeResponse();
    setSessionCookie(res, 'a/b', '2030-01-01T01:00:00.500Z', { secure: false }, now);
    expect(res.cookies()).toEqual([
      'svc_auth_session=a%2Fb; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax',
    ]);
  });

  it('adds Secure when asked and never sets a negative Max-Age', () => {
    const res = fakeResponse();
    setSessionCookie(res, 't', '2029-12-31T23:00:00.000Z', { secure: true }, now);
    expect(res.cookies()).toEqual([
      'svc_auth_session=t; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure',
    ]);
  });

  it('refuses an expiry that is not a timestamp', () => {
    expect(() => setSessionCookie(fakeResponse(), 't', 'soon', { secure: false })).toThrow();
  });

  it('clears with Max-Age=0, replacing a session cookie set earlier and keeping others', () => {
    const res = fakeResponse();
    res.setHeader('Set-Cookie', ['other=1; Path=/']);
    setSessionCookie(res, 't', '2030-01-01T01:00:00.000Z', { secure: true }, now);
    clearSessionCookie(res, { secure: true });
    expect(res.cookies()).toEqual([
      'other=1; Path=/',
      'svc_auth_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure',
    ]);
  });
});
