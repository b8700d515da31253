import type { IncomingMessage, ServerResponse } from 'node:http';
import { pageHeaders } from './page-layout.js';

/**
 * The full path and query of a request: `req.originalUrl` when a framework set it (Express
 * keeps the unmounted URL there), otherwise `req.url`.
 */
export function fullRequestUrl(req: IncomingMessage): URL {
  const original = (req as IncomingMessage & { originalUrl?: unknown }).originalUrl;
  const path = typeof original === 'string' ? original : (req.url ?? '/');
  // Only the path and query are read; the base is a placeholder.
  return new URL(path.startsWith('/') ? path : `/${path}`, 'http://dev-identity.invalid');
}

/** A request the service refuses before its handler runs (body too large, wrong type). */
export class RequestRejected extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const formLimitBytes = 16 * 1024;

/**
 * The urlencoded body of a form post. A body an outer framework parsed already (an object in
 * `req.body`) is taken from there.
 */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const parsed = (req as IncomingMessage & { body?: unknown }).body;
  if (typeof parsed === 'object' && parsed !== null && !req.readable) {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(parsed)) {
      if (typeof value === 'string') form.set(name, value);
    }
    return form;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new RequestRejected(415, 'Expected an application/x-www-form-urlencoded form.');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > formLimitBytes) throw new RequestRejected(413, 'The form is too large.');
    chunks.push(buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export function sendPage(res: ServerResponse, status: number, page: string): void {
  res.writeHead(status, pageHeaders);
  res.end(page);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(JSON.stringify(body));
}

export function sendEmpty(
  res: ServerResponse,
  status: number,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'cache-control': 'no-store', ...headers });
  res.end();
}

export function redirectSeeOther(res: ServerResponse, location: string): void {
  sendEmpty(res, 303, { location });
}
