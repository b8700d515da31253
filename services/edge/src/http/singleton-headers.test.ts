import { describe, expect, it } from '@jest/globals';
import { repeatedSingletonHeader } from './singleton-headers.js';

describe('repeatedSingletonHeader', () => {
  it('finds none in an ordinary request, or in repeated list headers', () => {
    expect(
      repeatedSingletonHeader([
        'Host',
        'example.com',
        'Accept',
        'a',
        'Accept',
        'b',
        'Cookie',
        'x',
        'cookie',
        'y',
        'Authorization',
        'Bearer t',
        'Content-Type',
        'application/json',
        'Content-Length',
        '2',
      ]),
    ).toBeUndefined();
    expect(repeatedSingletonHeader([])).toBeUndefined();
  });

  it.each([
    ['authorization', ['Authorization', 'a', 'authorization', 'b']],
    ['content-type', ['CONTENT-TYPE', 'a', 'x-other', 'y', 'Content-type', 'b']],
    ['content-length', ['content-length', '1', 'Content-Length', '1']],
    ['host', ['Host', 'a', 'hOST', 'b']],
  ])('names a repeated %s, in any case', (name, rawHeaders) => {
    expect(repeatedSingletonHeader(rawHeaders)).toBe(name);
  });

  it('does not take names of the same length for singletons', () => {
    expect(
      repeatedSingletonHeader([
        'x-authorizati',
        'a',
        'x-authorizati',
        'b',
        'hose',
        '1',
        'hose',
        '2',
      ]),
    ).toBeUndefined();
  });
});
