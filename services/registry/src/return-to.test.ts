import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/errors';
import { matchReturnTo, parseReturnUrlRoot, RETURN_TO_MAX_LENGTH } from './return-to.js';
import type { RedirectPairForMatching } from './return-to.js';

function pair(
  id: string,
  returnUrl: string,
  isDefault = false,
  callbackUrl = `https://bff.example/${id}/callback`,
): RedirectPairForMatching {
  return { id, returnUrl, callbackUrl, isDefault };
}

/** The error code a call throws, or undefined when it returns. */
function codeOf(call: () => unknown): string | undefined {
  try {
    call();
  } catch (error) {
    if (error instanceof GatewayError) return error.code;
    throw error;
  }
  return undefined;
}

function errorOf(call: () => unknown): GatewayError {
  try {
    call();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

// The most permissive registration: the default pair allowlists the whole of
// https://good.example, so any rejection on that origin is due to the syntax rules alone.
const wide = [
  pair('root', 'https://good.example/', true),
  pair('app', 'https://good.example/app'),
  pair('app-admin', 'https://good.example/app/admin/'),
  pair('local', 'http://localhost:3000/portal'),
  pair('idn', 'https://café.example'),
];

// Only /app is registered on https://good.example.
const appOnly = [
  pair('app', 'https://good.example/app', true),
  pair('local', 'http://localhost:3000/portal'),
];

const INVALID = 'INVALID_REDIRECT';
const FORBIDDEN = 'FORBIDDEN';

const exactly2048 = `https://good.example/${'a'.repeat(RETURN_TO_MAX_LENGTH - 'https://good.example/'.length)}`;

describe('matchReturnTo: accepted values', () => {
  const accepted: [string, string, string][] = [
    // [returnTo, expected pair id, expected normalized URL]
    ['https://good.example', 'root', 'https://good.example/'],
    ['https://good.example/', 'root', 'https://good.example/'],
    ['HTTPS://GOOD.EXAMPLE/Other?x=1', 'root', 'https://good.example/Other?x=1'],
    ['https://good.example:443/x', 'root', 'https://good.example/x'],
    ['https://good.example?x=1', 'root', 'https://good.example/?x=1'],
    ['https://good.example/app', 'app', 'https://good.example/app'],
    ['https://good.example/app/', 'app', 'https://good.example/app/'],
    ['https://good.example/app/x?y=1&z=%2F%2Fa', 'app', 'https://good.example/app/x?y=1&z=%2F%2Fa'],
    ['https://good.example/application', 'root', 'https://good.example/application'],
    ['https://good.example/app/admin', 'app-admin', 'https://good.example/app/admin'],
    [
      'https://good.example/app/admin/users/7',
      'app-admin',
      'https://good.example/app/admin/users/7',
    ],
    ['https://good.example/app/administrator', 'app', 'https://good.example/app/administrator'],
    ['https://good.example/app/./x', 'app', 'https://good.example/app/x'],
    ['https://good.example/other/../app/x', 'app', 'https://good.example/app/x'],
    ['https://good.example/app/%2e%2e/other', 'root', 'https://good.example/other'],
    ['https://good.example/users/@me', 'root', 'https://good.example/users/@me'],
    ['https://good.example/caf%C3%A9', 'root', 'https://good.example/caf%C3%A9'],
    ['https://good.example/%E3%80%82', 'root', 'https://good.example/%E3%80%82'],
    ['https://good.example/a"b', 'root', 'https://good.example/a%22b'],
    [
      'https://good.example/search?q=a%20b&next=//x',
      'root',
      'https://good.example/search?q=a%20b&next=//x',
    ],
    ['http://localhost:3000/portal', 'local', 'http://localhost:3000/portal'],
    ['http://LOCALHOST:3000/portal/a/b', 'local', 'http://localhost:3000/portal/a/b'],
    ['https://xn--caf-dma.example/x', 'idn', 'https://xn--caf-dma.example/x'],
    ['/', 'root', 'https://good.example/'],
    ['/other?x=1', 'root', 'https://good.example/other?x=1'],
    ['/app/x', 'app', 'https://good.example/app/x'],
    ['/app/admin?tab=2', 'app-admin', 'https://good.example/app/admin?tab=2'],
    [exactly2048, 'root', exactly2048],
  ];

  it.each(accepted)('%j is accepted for pair %s as %s', (returnTo, pairId, normalized) => {
    const match = matchReturnTo(returnTo, wide);
    expect(match.pair.id).toBe(pairId);
    expect(match.returnTo).toBe(normalized);
  });

  it('returns the matched pair itself, so its callback comes along', () => {
    const match = matchReturnTo('https://good.example/app/x', wide);
    expect(match.pair).toBe(wide[1]);
    expect(match.pair.callbackUrl).toBe('https://bff.example/app/callback');
  });

  it('accepts exactly 2048 characters and rejects 2049 as INVALID_REDIRECT', () => {
    expect(exactly2048).toHaveLength(2048);
    expect(codeOf(() => matchReturnTo(exactly2048, wide))).toBeUndefined();
    expect(codeOf(() => matchReturnTo(`${exactly2048}a`, wide))).toBe(INVALID);
    expect(codeOf(() => matchReturnTo(`/${'a'.repeat(2048)}`, wide))).toBe(INVALID);
  });
});

describe('matchReturnTo: open-redirect corpus', () => {
  // [label, returnTo, expected code]; run against `wide`, where all of good.example is allowed.
  const corpus: [string, string, string][] = [
    ['empty string', '', INVALID],
    ['2049 characters', `${exactly2048}a`, INVALID],
    ['scheme-relative', '//evil.com', INVALID],
    ['triple slash', '///evil.com', INVALID],
    ['slash backslash', '/\\evil.com', INVALID],
    ['double backslash', '\\\\evil.com', INVALID],
    ['backslash slash', '\\/evil.com', INVALID],
    ['encoded tab after slash', '/%09/evil.com', INVALID],
    ['encoded LF after slash', '/%0a/evil.com', INVALID],
    ['encoded CR after slash', '/%0D/evil.com', INVALID],
    ['encoded space after slash', '/%20/evil.com', INVALID],
    ['encoded slash after slash', '/%2F/evil.com', INVALID],
    ['two encoded slashes', '/%2f%2fevil.com', INVALID],
    ['encoded backslash', '/%5Cevil.com', INVALID],
    ['encoded backslash lower case', '/%5cevil.com', INVALID],
    ['encoded fullwidth solidus', '/%EF%BC%8Fevil.com', INVALID],
    ['encoded division slash U+2215', '/%E2%88%95evil.com', INVALID],
    ['encoded fullwidth reverse solidus', '/%EF%BC%BCevil.com', INVALID],
    ['encoded no-break space', '/%C2%A0/evil.com', INVALID],
    ['encoded zero-width space', '/%E2%80%8B/evil.com', INVALID],
    ['encoded NUL in the path', '/app/%00', INVALID],
    ['encoded double slash in an absolute path', 'https://good.example/%2F%2Fevil.com', INVALID],
    ['double slash in an absolute path', 'https://good.example//evil.com', INVALID],
    ['dot segment resolving to //', 'https://good.example/app/..//evil.com', INVALID],
    ['root-relative dot segment resolving to //', '/..//evil.com', INVALID],
    ['userinfo host', 'https://good.example@evil.com', INVALID],
    ['userinfo with password', 'https://good.example:pass@evil.com', INVALID],
    ['empty userinfo', 'https://@good.example/', INVALID],
    ['empty user and password', 'https://:@good.example/', INVALID],
    ['registered host as subdomain', 'https://good.example.evil.com', FORBIDDEN],
    ['registered host as suffix', 'https://evilgood.example', FORBIDDEN],
    ['trailing-dot host (a different origin)', 'https://good.example.', FORBIDDEN],
    ['trailing-dot host with path', 'https://good.example./app', FORBIDDEN],
    ['scheme without slashes', 'http:evil.com', INVALID],
    ['scheme with one slash', 'http:/evil.com', INVALID],
    ['scheme with backslashes', 'https:\\\\evil.com', INVALID],
    ['scheme with slash backslash', 'https:/\\evil.com', INVALID],
    ['scheme with empty authority', 'https:///evil.com', INVALID],
    ['backslash before @', 'https://good.example\\@evil.com', INVALID],
    ['ideographic full stop U+3002', 'https://good\u3002example', INVALID],
    ['fullwidth full stop U+FF0E', 'https://good\uff0eexample', INVALID],
    ['fullwidth solidus U+FF0F in the host', 'https://good.example\uff0fevil.com', INVALID],
    ['raw division slash U+2215', '/\u2215evil.com', INVALID],
    ['percent-encoded dot in the host', 'https://good%2eexample', INVALID],
    ['hex IPv4', 'https://0x7f.0.0.1', FORBIDDEN],
    ['decimal IPv4', 'https://2130706433', FORBIDDEN],
    ['IPv6 loopback', 'https://[::1]', FORBIDDEN],
    ['javascript scheme', 'javascript:alert(1)', INVALID],
    ['mixed-case javascript scheme', 'JaVaScRiPt:alert(1)', INVALID],
    ['javascript with an authority', 'javascript://good.example/%0aalert(1)', INVALID],
    ['data URL', 'data:text/html,x', INVALID],
    ['vbscript scheme', 'vbscript:x', INVALID],
    ['ftp scheme', 'ftp://good.example/', INVALID],
    ['tab inside', 'https://good.example/\tx', INVALID],
    ['newline inside a root-relative path', '/\nevil', INVALID],
    ['leading space', ' https://good.example/', INVALID],
    ['trailing space', 'https://good.example/ ', INVALID],
    ['raw NUL', 'https://good.example/x\u0000', INVALID],
    ['raw DEL', 'https://good.example/x\u007f', INVALID],
    ['hash', 'https://good.example#frag', INVALID],
    ['empty hash', 'https://good.example/#', INVALID],
    ['hash on a root-relative path', '/app#x', INVALID],
    ['encoded slash hiding a dot segment', 'https://good.example/app%2f..%2fadmin', INVALID],
    ['encoded slash after a dot segment', 'https://good.example/app/..%2fadmin', INVALID],
    ['dot segment with path parameters', 'https://good.example/app/..;/admin', INVALID],
    ['root-relative dot segment with path parameters', '/app/..;x=1/admin', INVALID],
    ['encoded dot segment with path parameters', '/app/%2e%2e;/admin', INVALID],
    ['encoded fullwidth dots', 'https://good.example/app/%EF%BC%8E%EF%BC%8E/x', INVALID],
    ['http instead of https', 'http://good.example/', FORBIDDEN],
    ['https instead of http', 'https://localhost:3000/portal', FORBIDDEN],
    ['other port', 'https://good.example:8443/', FORBIDDEN],
    ['other port on http', 'http://localhost:3001/portal', FORBIDDEN],
    ['default port instead of the registered one', 'http://localhost/portal', FORBIDDEN],
    ['path sharing a prefix without a / boundary', 'http://localhost:3000/portalx', FORBIDDEN],
    ['path above the root', 'http://localhost:3000/', FORBIDDEN],
    ['dot segments escaping the root', 'http://localhost:3000/portal/../admin', FORBIDDEN],
    [
      'encoded dot segments escaping the root',
      'http://localhost:3000/portal/%2e%2e/admin',
      FORBIDDEN,
    ],
    ['mixed encoded dot segments', 'http://localhost:3000/portal/.%2E/admin', FORBIDDEN],
    ['unregistered host', 'https://evil.com/', FORBIDDEN],
    ['relative path', 'app/x', INVALID],
    ['dot relative path', './app', INVALID],
    ['parent relative path', '../app', INVALID],
    ['bare host', 'good.example', INVALID],
    ['invalid port', 'https://good.example:99999/', INVALID],
  ];

  it.each(corpus)('%s (%j) gives %s', (_label, returnTo, code) => {
    expect(codeOf(() => matchReturnTo(returnTo, wide))).toBe(code);
  });

  it('never echoes the rejected value in the error message', () => {
    for (const [, returnTo] of corpus) {
      const error = errorOf(() => matchReturnTo(returnTo, wide));
      expect(error.message).not.toContain('evil');
      expect(error.message.length).toBeLessThan(100);
    }
  });

  it('gives the spec message for an unregistered value', () => {
    expect(errorOf(() => matchReturnTo('https://evil.com/', wide)).message).toBe(
      'returnTo is not registered for this platform.',
    );
  });
});

describe('matchReturnTo: paths under a root', () => {
  const cases: [string, string, string][] = [
    ['/app accepts /app', 'https://good.example/app', 'app'],
    ['/app accepts /app/', 'https://good.example/app/', 'app'],
    ['/app accepts /app/x', 'https://good.example/app/x', 'app'],
    ['/app rejects /application', 'https://good.example/application', FORBIDDEN],
    ['/app rejects /', 'https://good.example/', FORBIDDEN],
    ['/app rejects /App (paths are case-sensitive)', 'https://good.example/App', FORBIDDEN],
    ['/app rejects /app/../admin', 'https://good.example/app/../admin', FORBIDDEN],
    ['/app rejects /app/%2e%2e/admin', 'https://good.example/app/%2e%2e/admin', FORBIDDEN],
    ['/app rejects /app/%2E%2E/admin', 'https://good.example/app/%2E%2E/admin', FORBIDDEN],
    [
      '/app rejects /app%2f..%2fadmin as malformed',
      'https://good.example/app%2f..%2fadmin',
      INVALID,
    ],
    ['/app rejects root-relative /admin', '/admin', FORBIDDEN],
    ['/app rejects root-relative /app/../admin', '/app/../admin', FORBIDDEN],
    ['/app rejects root-relative /app/%2e%2e/admin', '/app/%2e%2e/admin', FORBIDDEN],
    ['/app accepts root-relative /app/x', '/app/x', 'app'],
  ];

  it.each(cases)('%s', (_name, returnTo, expected) => {
    const code = codeOf(() => matchReturnTo(returnTo, appOnly));
    if (expected === FORBIDDEN || expected === INVALID) expect(code).toBe(expected);
    else expect(matchReturnTo(returnTo, appOnly).pair.id).toBe(expected);
  });

  it('the WHATWG parser resolves %2e%2e as .. before matching, so it cannot hide from the root check', () => {
    expect(new URL('https://good.example/app/%2e%2e/admin').pathname).toBe('/admin');
    expect(codeOf(() => matchReturnTo('https://good.example/app/%2e%2e/admin', appOnly))).toBe(
      FORBIDDEN,
    );
  });

  it('encoded white space, controls and backslashes are refused anywhere in the path, not in the query', () => {
    expect(codeOf(() => matchReturnTo('https://good.example/app/my%20file', appOnly))).toBe(
      INVALID,
    );
    expect(
      codeOf(() => matchReturnTo('https://good.example/app/x%0d%0aSet-Cookie:a', appOnly)),
    ).toBe(INVALID);
    expect(codeOf(() => matchReturnTo('https://good.example/app/a%5Cb', appOnly))).toBe(INVALID);
    expect(matchReturnTo('https://good.example/app/x?q=my%20file%0d%0a', appOnly).returnTo).toBe(
      'https://good.example/app/x?q=my%20file%0d%0a',
    );
  });

  it('a trailing slash in the registered returnUrl does not change the boundary', () => {
    const pairs = [pair('app', 'https://good.example/app/', true)];
    expect(matchReturnTo('https://good.example/app', pairs).pair.id).toBe('app');
    expect(codeOf(() => matchReturnTo('https://good.example/application', pairs))).toBe(FORBIDDEN);
  });
});

describe('matchReturnTo: longest root wins', () => {
  const pairs = [
    pair('root', 'https://good.example', true),
    pair('app', 'https://good.example/app'),
  ];

  it('roots / and /app: /app/x selects the /app pair', () => {
    expect(matchReturnTo('https://good.example/app/x', pairs).pair.id).toBe('app');
  });

  it('roots / and /app: /other selects the / pair', () => {
    expect(matchReturnTo('https://good.example/other', pairs).pair.id).toBe('root');
  });

  it('the order of the pairs does not matter', () => {
    expect(matchReturnTo('https://good.example/app/x', [...pairs].reverse()).pair.id).toBe('app');
    expect(matchReturnTo('https://good.example/other', [...pairs].reverse()).pair.id).toBe('root');
  });

  it('on a tie between two identical roots the default pair wins', () => {
    const tied = [
      pair('first', 'https://good.example/app'),
      pair('default', 'https://good.example/app/', true),
    ];
    expect(matchReturnTo('https://good.example/app/x', tied).pair.id).toBe('default');
  });
});

describe('matchReturnTo: root-relative values', () => {
  it('resolve against the default pair origin, not the first pair', () => {
    const pairs = [
      pair('other', 'https://other.example/'),
      pair('portal', 'https://portal.example:8443/', true),
    ];
    const match = matchReturnTo('/x?y=1', pairs);
    expect(match.pair.id).toBe('portal');
    expect(match.returnTo).toBe('https://portal.example:8443/x?y=1');
  });

  it('are matched against every pair of that origin, so the longest root still wins', () => {
    const match = matchReturnTo('/app/x', wide);
    expect(match.pair.id).toBe('app');
    expect(match.returnTo).toBe('https://good.example/app/x');
  });

  it('outside every root of the default origin are FORBIDDEN, even if another origin allows the path', () => {
    const pairs = [
      pair('portal', 'https://portal.example/app', true),
      pair('good', 'https://good.example/'),
    ];
    expect(matchReturnTo('/app/x', pairs).pair.id).toBe('portal');
    expect(codeOf(() => matchReturnTo('/x', pairs))).toBe(FORBIDDEN);
  });

  it('without a default pair are FORBIDDEN, while absolute values still match', () => {
    const pairs = [pair('app', 'https://good.example/app')];
    expect(codeOf(() => matchReturnTo('/app/x', pairs))).toBe(FORBIDDEN);
    expect(matchReturnTo('https://good.example/app/x', pairs).pair.id).toBe('app');
  });

  it('with an empty pair list are FORBIDDEN', () => {
    expect(codeOf(() => matchReturnTo('/x', []))).toBe(FORBIDDEN);
    expect(codeOf(() => matchReturnTo('https://good.example/', []))).toBe(FORBIDDEN);
  });

  it('that are malformed give INVALID_REDIRECT before the missing default pair is noticed', () => {
    expect(codeOf(() => matchReturnTo('/%2F/evil.com', []))).toBe(INVALID);
    expect(codeOf(() => matchReturnTo('//evil.com', []))).toBe(INVALID);
  });
});

describe('matchReturnTo: broken registrations', () => {
  it('a pair whose returnUrl is not a valid root allowlists nothing; the other pairs still match', () => {
    const pairs = [
      pair('broken', 'https://good.example/app?x=1'),
      pair('userinfo', 'https://evil.com@good.example/'),
      pair('ok', 'https://good.example/ok', true),
    ];
    expect(codeOf(() => matchReturnTo('https://good.example/app', pairs))).toBe(FORBIDDEN);
    expect(matchReturnTo('https://good.example/ok/1', pairs).pair.id).toBe('ok');
  });

  it('a default pair with a broken returnUrl makes root-relative values FORBIDDEN', () => {
    const pairs = [pair('broken', 'not a url', true), pair('ok', 'https://good.example/')];
    expect(codeOf(() => matchReturnTo('/x', pairs))).toBe(FORBIDDEN);
  });
});

describe('parseReturnUrlRoot', () => {
  const valid: [string, string, string][] = [
    ['https://good.example', 'https://good.example', '/'],
    ['https://good.example/', 'https://good.example', '/'],
    ['https://Good.Example:443/app/', 'https://good.example', '/app'],
    ['HTTPS://good.example/a/b/', 'https://good.example', '/a/b'],
    ['http://localhost:3000/portal', 'http://localhost:3000', '/portal'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080', '/'],
    ['https://café.example/é', 'https://xn--caf-dma.example', '/%C3%A9'],
  ];

  it.each(valid)('%j is a root with origin %s and path %s', (returnUrl, origin, path) => {
    expect(parseReturnUrlRoot(returnUrl)).toEqual({ origin, path });
  });

  const invalid: [string, string][] = [
    ['empty', ''],
    ['too long', `https://good.example/${'a'.repeat(2048)}`],
    ['root-relative', '/app'],
    ['no scheme', 'good.example'],
    ['scheme-relative', '//good.example'],
    ['ftp scheme', 'ftp://good.example/'],
    ['javascript scheme', 'javascript:alert(1)'],
    ['scheme without slashes', 'http:good.example'],
    ['empty authority', 'https:///good.example'],
    ['userinfo', 'https://user@good.example'],
    ['userinfo with password', 'https://user:pw@good.example'],
    ['query', 'https://good.example/?x=1'],
    ['empty query', 'https://good.example/app?'],
    ['hash', 'https://good.example/#x'],
    ['empty hash', 'https://good.example/app#'],
    ['backslash', 'https://good.example\\app'],
    ['tab', 'https://good.example/\tapp'],
    ['leading space', ' https://good.example'],
    ['percent in the host', 'https://good%2eexample'],
    ['invalid port', 'https://good.example:99999'],
    ['empty path segment at the end', 'https://good.example/app//'],
    ['only slashes', 'https://good.example//'],
    ['encoded double slash', 'https://good.example/%2F%2Fx'],
    ['encoded slash hiding a dot segment', 'https://good.example/app%2f..%2fadmin'],
  ];

  it.each(invalid)('rejects a returnUrl with %s as VALIDATION_ERROR', (_label, returnUrl) => {
    expect(codeOf(() => parseReturnUrlRoot(returnUrl))).toBe('VALIDATION_ERROR');
  });
});
