import { describe, expect, it } from '@jest/globals';
import { createCookieJar } from './cookie-jar.js';

function responseSetting(...cookies: string[]): Response {
  const headers = new Headers();
  for (const cookie of cookies) headers.append('set-cookie', cookie);
  return new Response(null, { headers });
}

describe('createCookieJar', () => {
  it('sends cookies under their path, most specific first', () => {
    const jar = createCookieJar();
    jar.store(
      'http://127.0.0.1/a/login',
      responseSetting('root=1; Path=/; HttpOnly', 'deep=2; Path=/a/interaction/x', 'here=3'),
    );
    expect(jar.headerFor('http://127.0.0.1/a/interaction/x')).toBe('deep=2; here=3; root=1');
    expect(jar.headerFor('http://127.0.0.1/a/interaction/xy')).toBe('here=3; root=1');
    expect(jar.headerFor('http://127.0.0.1/b')).toBe('root=1');
  });

  it('replaces and expires cookies', () => {
    const jar = createCookieJar();
    jar.store('http://127.0.0.1/', responseSetting('s=1; path=/', 't=1; path=/'));
    jar.store(
      'http://127.0.0.1/',
      responseSetting('s=2; path=/', 't=; path=/; expires=Thu, 01 Jan 1970 00:00:00 GMT'),
    );
    expect(jar.headerFor('http://127.0.0.1/')).toBe('s=2');
    jar.store('http://127.0.0.1/', responseSetting('s=; path=/; max-age=0'));
    expect(jar.headerFor('http://127.0.0.1/')).toBeUndefined();
  });
});
