import type { ServerResponse } from 'node:http';

/**
 * The console's headers beside the edge's own (security-headers.ts): a strict policy with no
 * inline script or style (every script and stylesheet is a file of the console's build), API
 * calls only to the gateway itself, no framing (X-Frame-Options for older browsers too), and
 * no referrer: the console's callback URL carries a handoff code.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

export function setConsoleHeaders(res: ServerResponse): void {
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) res.setHeader(name, value);
}
