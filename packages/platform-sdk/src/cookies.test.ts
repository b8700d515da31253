import { describe, expect, it } from '@jest/globals';
import { deleteCookie, randomCookieValue, readCookie, serializeCookie } from './cookies.js';

describe('serializeCookie', () => {
  it('builds an HttpOnly SameSite=Lax cookie with Max-Age and Path', () => {
    expect(
      serializeCookie('gw_login_pending', 'abc', { maxAgeSeconds: 600, path: '/', secure: false }),
    ).toBe('gw_login_pending=abc; Max-Age=600; Path=/; HttpOnly; SameSite=Lax');
  });

  it('adds Secure when asked and rounds Max-Age down, never below 0', () => {
    expect(serializeCookie('s', 'v', { maxAgeSeconds: 59.9, path: '/app', secure: true })).toBe(
      's=v; Max-Age=59; Path=/app; HttpOnly; SameSite=Lax; Secure',
    );
    expect(serializeCookie('s', 'v', { maxAgeSeconds: -5, path: '/', secure: false })).toContain(
      'Max-Age=0;',
    );
  });

  it('deletes with an empty value and Max-Age=0 on the same path', () => {
    expect(deleteCookie('platform_session', { path: '/', secure: true })).toBe(
      'platform_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure',
    );
  });

  it('refuses names, values and paths that would break the header', () => {
    const attributes = { maxAgeSeconds: 1, path: '/', secure: false };
    expect(() => serializeCookie('a b', 'v', attributes)).toThrow('cookie name');
    expect(() => serializeCookie('a=b', 'v', attributes)).toThrow('cookie name');
    expect(() => serializeCookie('a', 'v;Domain=evil', attributes)).toThrow('value');
    expect(() => serializeCookie('a', 'v', { ...attributes, path: '/x;Secure' })).toThrow('path');
    expect(() => serializeCookie('a', 'v', { ...attributes, path: 'x' })).toThrow('path');
  });
});

describe('readCookie', () => {
  it('finds a cookie among others, trimming spaces and quotes', () => {
    const header = 'a=1; gw_login_pending=xyz ;b="quoted"';
    expect(readCookie(header, 'gw_login_pending')).toBe('xyz');
    expect(readCookie(header, 'b')).toBe('quoted');
    expect(readCookie(header, 'a')).toBe('1');
  });

  it('answers the first of two cookies with the same name (the more specific path)', () => {
    expect(readCookie('s=specific; s=general', 's')).toBe('specific');
  });

  it('keeps = inside values and answers empty values as empty', () => {
    expect(readCookie('t=a=b==', 't')).toBe('a=b==');
    expect(readCookie('t=', 't')).toBe('');
  });

  it('does not match a name that only ends or starts like the wanted one', () => {
    expect(readCookie('xgw=1; gw_extra=2; flag', 'gw')).toBeUndefined();
    expect(readCookie(undefined, 'gw')).toBeUndefined();
    expect(readCookie('', 'gw')).toBeUndefined();
  });
});

describe('randomCookieValue', () => {
  it('is 256 bits of base64url, different each time', () => {
    const value = randomCookieValue();
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomCookieValue()).not.toBe(value);
  });
});
