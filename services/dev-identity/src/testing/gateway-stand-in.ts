import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A STAND-IN FOR THE GATEWAY, for browser tests of the onboarding page only: a plain
// node:http server answering the four user onboarding endpoints of spec 4.9 (requirements,
// values, complete, global status) and `GET /v1/auth/resume` with canned answers, and
// recording what the page sent. It lets a test assert the page's rendering, client-side
// validation, normalisation, error placement and navigation. It implements none of the
// gateway's rules (authentication, value validation, onboarding evaluation): the end-to-end
// test against the real gateway is a separate test.

export type StandInRequest = {
  method: string;
  /** Path and query. */
  url: string;
  /** The Cookie header: the page must send the gateway's cookie (`credentials: 'include'`). */
  cookie: string | undefined;
  origin: string | undefined;
  contentType: string | undefined;
  /** The parsed JSON body, or undefined without one. */
  body: unknown;
};

export type StandInReply = { status: number; body: unknown };

export type GatewayStandIn = {
  origin: string;
  /** Every request but CORS preflights and the favicon, in order. */
  requests: StandInRequest[];
  /**
   * The answers to `METHOD /path` (without query), in order; the last one repeats. Replaces
   * what was set before.
   */
  reply(route: string, ...replies: StandInReply[]): void;
  close(): Promise<void>;
};

/**
 * Starts the stand-in on 127.0.0.1. CORS answers reflect the request's Origin with
 * credentials allowed, as the gateway does for an allowlisted identity UI origin.
 * Unconfigured routes answer 404 `{ code: 'NOT_FOUND' }`; `GET /v1/auth/resume` answers a
 * small page.
 */
export async function startGatewayStandIn(): Promise<GatewayStandIn> {
  const requests: StandInRequest[] = [];
  const replies = new Map<string, StandInReply[]>();

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    if (origin !== undefined) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-allow-credentials', 'true');
      res.setHeader('vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, PUT, POST',
        'access-control-allow-headers': 'content-type',
        'access-control-max-age': '0',
      });
      res.end();
      return;
    }
    if (req.url === '/favicon.ico') {
      // Chromium asks for it after navigating to the resume page; not the page's request.
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = req.url ?? '/';
    requests.push({
      method: req.method ?? 'GET',
      url,
      cookie: req.headers.cookie,
      origin,
      contentType: req.headers['content-type'],
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    });
    const path = new URL(url, 'http://stand-in.invalid').pathname;
    if (req.method === 'GET' && path === '/v1/auth/resume') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!DOCTYPE html><title>Resumed</title><p>Resumed by the gateway stand-in</p>');
      return;
    }
    const queue = replies.get(`${req.method ?? 'GET'} ${path}`) ?? [];
    const next = (queue.length > 1 ? queue.shift() : queue[0]) ?? {
      status: 404,
      body: { code: 'NOT_FOUND', message: `The stand-in has no answer for ${req.method} ${path}.` },
    };
    res.writeHead(next.status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(next.body));
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'STAND_IN_FAILED', message: String(error) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    reply(route, ...routeReplies) {
      replies.set(route, routeReplies);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
