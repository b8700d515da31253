import { describe, expect, it } from '@jest/globals';
import { isOrigin, localPath } from './request-origin.js';

describe('localPath: where the login route may send the user back to', () => {
  it.each([
    ['/', '/'],
    ['/orders?page=2', '/orders?page=2'],
    ['/a/../b', '/b'],
    ['/orders#top', '/orders'],
  ])('keeps %s as %s', (value, expected) => {
    expect(localPath(value)).toBe(expected);
  });

  it.each([
    ['a protocol-relative URL', '//evil.example/'],
    ['a backslash trick', '/\\evil.example/'],
    ['an absolute URL', 'https://evil.example/'],
    ['a relative path', 'orders'],
    ['a control character', '/a\nb'],
    ['a tab', '/\t/evil.example'],
    ['an over-long path', `/${'x'.repeat(2048)}`],
    ['a list', ['/a', '/b']],
    ['nothing', undefined],
  ])('refuses %s', (_name, value) => {
    expect(localPath(value)).toBeUndefined();
  });
});

describe('isOrigin', () => {
  it('accepts scheme://host[:port] only', () => {
    expect(isOrigin('http://localhost:3000')).toBe(true);
    expect(isOrigin('https://shop.example')).toBe(true);
    expect(isOrigin('https://shop.example/')).toBe(false);
    expect(isOrigin('https://shop.example/app')).toBe(false);
    expect(isOrigin('ftp://shop.example')).toBe(false);
    expect(isOrigin('shop.example')).toBe(false);
  });
});
