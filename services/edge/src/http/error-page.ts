import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorCode, GatewayError } from '@gateway/errors';
import { REQUEST_ID_HEADER } from '@gateway/telemetry';

/**
 * Error answers a person can read. The endpoints a browser navigates to (spec 4.1-4.3, 4.7)
 * and any path no route serves answer a request that prefers `text/html` with an HTML page of
 * the same status; every other request, including one that accepts any type alike or sends
 * no Accept, keeps the `{ code, message, details? }` body of spec 7. Used by the one
 * error writer (error-handler.ts).
 */

/**
 * What a page may link to beyond the text. The edge offers the account page; an operation
 * whose visitor is often signed out (start) offers the home of the platform it names instead
 * (operation.ts `errorPage`), or no link at all.
 */
export type ErrorPageOptions = {
  /** ACCOUNT_CENTER_URL: offered as a place to go when set. */
  accountUrl?: string | undefined;
  /** The registered home of the platform the request names: its default return URL. */
  platformHome?: { url: string; name: string } | undefined;
};

/** The endpoints a browser navigates to (start, callback, resume, logged-out). */
const BROWSER_NAVIGATION_PATHS: ReadonlySet<string> = new Set([
  '/v1/auth/start',
  '/v1/auth/callback',
  '/v1/auth/resume',
  '/v1/auth/logged-out',
]);

/**
 * Whether the error answer to `req` is a page: a GET or HEAD that prefers HTML, on a browser
 * endpoint or on a path that no route serves for any method (`unmatchedRoute`, the 404).
 */
export function wantsErrorPage(
  req: IncomingMessage,
  path: string,
  unmatchedRoute = false,
): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (!unmatchedRoute && !BROWSER_NAVIGATION_PATHS.has(path)) return false;
  return prefersHtml(req.headers.accept);
}

type MediaRange = { type: string; subtype: string; quality: number };

const QUALITY = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * RFC 9110 section 12.5.1: true when `text/html` is acceptable and ranked strictly above
 * `application/json`. A tie (any type alike, or both listed alike) and a missing header keep
 * JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined || accept === '') return false;
  const ranges = parseAccept(accept);
  const html = qualityOf(ranges, 'text', 'html');
  return html > 0 && html > qualityOf(ranges, 'application', 'json');
}

function parseAccept(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of accept.split(',')) {
    const [mediaRange = '', ...parameters] = element.split(';');
    const [type = '', subtype = ''] = mediaRange.trim().toLowerCase().split('/');
    if (type === '' || subtype === '') continue;
    let quality = 1;
    for (const parameter of parameters) {
      const [name = '', value = ''] = parameter.split('=').map((part) => part.trim());
      if (name.toLowerCase() !== 'q') continue;
      quality = QUALITY.test(value) ? Number(value) : Number.NaN;
    }
    if (!Number.isNaN(quality)) ranges.push({ type, subtype, quality });
  }
  return ranges;
}

/** The quality of the most specific range that matches `type/subtype`; 0 when none does. */
function qualityOf(ranges: readonly MediaRange[], type: string, subtype: string): number {
  let best: { specificity: number; quality: number } = { specificity: -1, quality: 0 };
  for (const range of ranges) {
    let specificity: number;
    if (range.type === type && range.subtype === subtype) specificity = 2;
    else if (range.type === type && range.subtype === '*') specificity = 1;
    else if (range.type === '*' && range.subtype === '*') specificity = 0;
    else continue;
    if (specificity > best.specificity) best = { specificity, quality: range.quality };
  }
  return best.quality;
}

const HEADLINE_BY_CODE: Partial<Record<ErrorCode, string>> = {
  INVALID_REDIRECT: 'The return address is not valid',
  ACCOUNT_DELETED: 'This account has been deleted',
  ACCOUNT_INACTIVE: 'This account is not active',
  RATE_LIMITED: 'Too many attempts',
  INTERNAL_ERROR: 'Something went wrong',
};

const HEADLINE_BY_STATUS: Partial<Record<number, string>> = {
  400: 'This request is not valid',
  401: 'Sign-in could not be completed',
  403: 'Access is not allowed',
  404: 'Not found',
  409: 'Sign-in cannot continue',
  502: 'The identity service answered incorrectly',
  503: 'Sign-in is unavailable right now',
};

function headlineOf(error: GatewayError): string {
  if (identityErrorOf(error) !== undefined) return 'Sign-in was not completed';
  return HEADLINE_BY_CODE[error.code] ?? HEADLINE_BY_STATUS[error.status] ?? 'Something went wrong';
}

/** What to do next: back to the platform's home when it is known, else to where one came from. */
function adviceOf(status: number, home: ErrorPageOptions['platformHome']): string {
  const wait = status === 429 || status >= 502;
  if (home !== undefined) {
    const link = `<a href="${escapeHtml(home.url)}">${escapeHtml(home.name)}</a>`;
    return wait
      ? `Wait a few seconds, then go back to ${link} and sign in again from there.`
      : `Go back to ${link} and sign in again from there.`;
  }
  return wait
    ? 'Wait a few seconds, then return to the site you came from and sign in again.'
    : 'Return to the site you came from and start again from there.';
}

type Issue = { location: string; path: string; message: string };

/** The issues of a VALIDATION_ERROR (operation.ts parseInput), when its details carry them. */
function issuesOf(error: GatewayError): Issue[] {
  const issues = error.details?.issues;
  if (!Array.isArray(issues)) return [];
  return issues.filter(
    (issue): issue is Issue =>
      typeof issue === 'object' &&
      issue !== null &&
      !Array.isArray(issue) &&
      typeof issue.location === 'string' &&
      typeof issue.path === 'string' &&
      typeof issue.message === 'string',
  );
}

// The wording of zod's own messages (operation.ts passes them on in the JSON body, which keeps
// them as they are); a message of another shape is shown as it is.
const UNRECOGNIZED_KEYS = /^Unrecognized keys?: (.*)$/;

/** One issue in words, as HTML (every value escaped): `The parameter returnTo is missing.` */
function describeIssue({ location, path, message }: Issue): string {
  const kind = location === 'query' ? 'parameter' : location === 'path' ? 'path part' : 'field';
  const unknown = UNRECOGNIZED_KEYS.exec(message);
  if (unknown !== null) {
    const names = [...(unknown[1] ?? '').matchAll(/"([^"]*)"/g)].map((match) => match[1] ?? '');
    const list = names.map((name) => `<code>${escapeHtml(name)}</code>`).join(', ');
    return names.length === 1
      ? `The ${kind} ${list} is not one this address takes.`
      : `The ${kind}s ${list} are not ones this address takes.`;
  }
  const name = `<code>${escapeHtml(path === '' ? location : path)}</code>`;
  if (/received undefined$/.test(message)) return `The ${kind} ${name} is missing.`;
  if (/must match pattern/.test(message)) return `The ${kind} ${name} is not in the expected form.`;
  return `The ${kind} ${name} is not valid: ${escapeHtml(message)}`;
}

/** The list of what is wrong with the request, or undefined when the error names nothing. */
function issueList(error: GatewayError): string | undefined {
  const issues = issuesOf(error);
  if (issues.length === 0) return undefined;
  return `<ul>${issues.map((issue) => `<li>${describeIssue(issue)}</li>`).join('')}</ul>`;
}

/** The identity provider's own error code (callback, spec 4.2), when the details carry one. */
function identityErrorOf(error: GatewayError): string | undefined {
  const value = error.details?.identityError;
  return typeof value === 'string' ? value : undefined;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

// The page's only style, allowed by hash in its Content-Security-Policy; nothing else loads.
const STYLE =
  'body{margin:0;font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1f2328}' +
  'main{max-width:32rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.75rem}' +
  'h1{font-size:1.4rem;margin:0 0 1rem}.reference{color:#57606a;font-size:.9rem}a{color:#0969da}';

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The page of one error; every value taken from the error or the request is escaped. */
export function renderErrorPage(
  error: GatewayError,
  context: ErrorPageOptions & { requestId?: string | undefined },
): string {
  const headline = escapeHtml(headlineOf(error));
  const identityError = identityErrorOf(error);
  const reference = [`Error code: <code>${escapeHtml(error.code)}</code> (HTTP ${error.status})`];
  if (context.requestId !== undefined) {
    reference.push(`Request ID: <code>${escapeHtml(context.requestId)}</code>`);
  }
  const content = [
    `<h1>${headline}</h1>`,
    `<p>${escapeHtml(error.message)}</p>`,
    issueList(error),
    identityError === undefined
      ? undefined
      : `<p>The identity provider reported: <code>${escapeHtml(identityError)}</code></p>`,
    `<p>${adviceOf(error.status, context.platformHome)}</p>`,
    context.accountUrl === undefined
      ? undefined
      : `<p><a href="${escapeHtml(context.accountUrl)}">Go to your account</a></p>`,
    `<p class="reference">${reference.join('<br>')}</p>`,
  ];
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    `<title>${headline}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    ...content.filter((line) => line !== undefined),
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * Writes `error` as its page with the status of its code. The error writer (error-handler.ts)
 * set the cache policy, and the security headers and the request id were set before.
 */
export function writeErrorPage(
  res: ServerResponse,
  error: GatewayError,
  options: ErrorPageOptions,
): void {
  const requestId = res.getHeader(REQUEST_ID_HEADER);
  const page = renderErrorPage(error, {
    ...options,
    requestId: typeof requestId === 'string' ? requestId : undefined,
  });
  res.statusCode = error.status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('Content-Length', Buffer.byteLength(page));
  res.end(page);
}
