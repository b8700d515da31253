import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/errors';
import { parseBasicCredentials } from './basic-credentials.js';

// Parsing of `Authorization: Basic` for platform credentials (RFC 7617, RFC 6749 section
// 2.3.1). Verification against the registry is tested over HTTP in routes/auth-routes.test.ts.

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('parseBasicCredentials', () => {
  it.each([
    ['plain credentials', basic('gwc_a:gws_b'), 'gwc_a', 'gws_b'],
    ['a lower-case scheme', basic('gwc_a:gws_b').replace('Basic', 'basic'), 'gwc_a', 'gws_b'],
    [
      'missing padding',
      'Basic ' + Buffer.from('ab:c').toString('base64').replace(/=+$/, ''),
      'ab',
      'c',
    ],
    ['a colon in the secret', basic('gwc_a:b:c'), 'gwc_a', 'b:c'],
    ['percent-encoded parts', basic('id%3Ax%20y:s%25%3A'), 'id:x y', 's%:'],
    ['a literal +, kept as it is', basic('id+1:s+2'), 'id+1', 's+2'],
    ['UTF-8', basic('ïd:sécret'), 'ïd', 'sécret'],
  ])('reads %s', (_name, header, clientId, clientSecret) => {
    expect(parseBasicCredentials(header)).toEqual({ clientId, clientSecret });
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another scheme', 'Bearer abc'],
    ['the scheme alone', 'Basic'],
    ['two tokens', `${basic('a:b')} ${basic('c:d')}`],
    ['characters outside base64', 'Basic a:b'],
    ['no colon', basic('gwc_a')],
    ['an empty id', basic(':s')],
    ['an empty secret', basic('id:')],
    ['a malformed escape', basic('id:%E0%A4%A')],
    ['invalid UTF-8', `Basic ${Buffer.from([0x61, 0x3a, 0xc3]).toString('base64')}`],
    ['a control character', basic('id:s\n')],
    ['an encoded control character', basic('id:%00')],
    ['an id over 256 characters', basic(`${'a'.repeat(257)}:s`)],
    ['a header over 2048 characters', basic(`id:${'s'.repeat(2000)}`)],
  ])('refuses %s with UNAUTHORIZED', (_name, header) => {
    let failure: unknown;
    try {
      parseBasicCredentials(header);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).code).toBe('UNAUTHORIZED');
  });
});
