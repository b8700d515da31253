// Receiving JSON bodies (spec 7): the whole body is taken from node's buffer when the request
// has been parsed already, or read as it arrives; both give the same answers. Real HTTP.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { GatewayError } from '@gateway/errors';
import { formOf, isJsonMediaType, jsonOf, receiveBody } from './request-body.js';

let server: Server;
let port: number;
/** Whether the whole body was in the request's buffer when readJsonBody was called. */
const bufferedWhenRead: boolean[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    // As the edge does: the body is read after a turn of awaited work (credentials).
    const answer = (status: number, json: unknown) => {
      const text = JSON.stringify(json);
      res.writeHead(status, { 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    void (async () => {
      await Promise.resolve();
      bufferedWhenRead.push(req.readableLength === Number(req.headers['content-length']));
      try {
        const received = await receiveBody(req, {
          limitBytes: 64,
          deadlineMs: 5_000,
          accepts: isJsonMediaType,
          unsupported: 'JSON only.',
        });
        const body = jsonOf(received);
        answer(200, { body: body ?? null });
      } catch (error) {
        const code = error instanceof GatewayError ? error.code : 'INTERNAL_ERROR';
        answer(error instanceof GatewayError ? error.status : 500, { code });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/**
 * Sends the request head with the first part of its body in one write, then the other parts
 * `gapMs` apart (as platform backends send small requests: in one piece); the answer's
 * status and JSON.
 */
function send(
  parts: string[],
  headers: Record<string, string>,
  gapMs = 0,
): Promise<{ status: number; json: unknown }> {
  const chunked = headers['transfer-encoding'] === 'chunked';
  const framed = (part: string) =>
    chunked ? `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n` : part;
  const head =
    'POST / HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n' +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n';
  const pieces = parts.map(framed);
  if (chunked) pieces.push('0\r\n\r\n');
  pieces[0] = head + (pieces[0] ?? '');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [statusLine = '', body = ''] = [text.split('\r\n')[0], text.split('\r\n\r\n')[1]];
      resolve({ status: Number(statusLine.split(' ')[1]), json: JSON.parse(body) as unknown });
    });
    void (async () => {
      for (const [index, piece] of pieces.entries()) {
        if (index > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        socket.write(piece);
      }
    })();
  });
}

const json = { 'content-type': 'application/json' };

describe('receiveBody and jsonOf', () => {
  it('reads a body that arrived with its headers from the buffer', async () => {
    bufferedWhenRead.length = 0;
    const text = JSON.stringify({ token: 'abc' });
    const answer = await send([text], { ...json, 'content-length': String(text.length) });
    expect(answer).toEqual({ status: 200, json: { body: { token: 'abc' } } });
    expect(bufferedWhenRead).toEqual([true]);
  });

  it('reads a body that is still arriving as it comes', async () => {
    bufferedWhenRead.length = 0;
    const answer = await send(['{"token":', '"abc"}'], { ...json, 'content-length': '15' }, 50);
    expect(answer).toEqual({ status: 200, json: { body: { token: 'abc' } } });
    const chunked = await send(['{"token":', '"abc"}'], {
      ...json,
      'transfer-encoding': 'chunked',
    });
    expect(chunked).toEqual({ status: 200, json: { body: { token: 'abc' } } });
    expect(bufferedWhenRead).toEqual([false, false]);
  });

  it('serves the next request of a kept-alive connection after a body read from the buffer', async () => {
    const socket = connect(port, '127.0.0.1');
    const answers: string[] = [];
    let pending = '';
    const next = () =>
      new Promise<void>((resolve) => {
        const onData = (chunk: Buffer) => {
          pending += chunk.toString('utf8');
          const headEnd = pending.indexOf('\r\n\r\n');
          const length = Number(/content-length: (\d+)/i.exec(pending)?.[1] ?? NaN);
          if (headEnd < 0 || pending.length < headEnd + 4 + length) return;
          answers.push(pending.slice(headEnd + 4, headEnd + 4 + length));
          pending = '';
          socket.off('data', onData);
          resolve();
        };
        socket.on('data', onData);
      });
    for (const token of ['one', 'two']) {
      const body = JSON.stringify({ token });
      const answered = next();
      socket.write(
        `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
          `content-length: ${body.length}\r\n\r\n${body}`,
      );
      await answered;
    }
    socket.destroy();
    expect(answers.map((text) => JSON.parse(text) as unknown)).toEqual([
      { body: { token: 'one' } },
      { body: { token: 'two' } },
    ]);
  });

  it.each([
    ['in one piece', 0],
    ['in pieces', 50],
  ])('refuses a chunked body over the limit with 413 (%s)', async (_how, gapMs) => {
    const answer = await send(
      ['{"token":"', 'x'.repeat(80), '"}'],
      { ...json, 'transfer-encoding': 'chunked' },
      gapMs,
    );
    expect(answer).toEqual({ status: 413, json: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('answers malformed JSON with 400 and another media type with 415', async () => {
    expect(await send(['{nope'], { ...json, 'content-length': '5' })).toEqual({
      status: 400,
      json: { code: 'VALIDATION_ERROR' },
    });
    expect(await send(['a=b'], { 'content-type': 'text/plain', 'content-length': '3' })).toEqual({
      status: 415,
      json: { code: 'UNSUPPORTED_MEDIA_TYPE' },
    });
  });

  it('reads an empty chunked body as no body', async () => {
    expect(await send([], { ...json, 'transfer-encoding': 'chunked' })).toEqual({
      status: 200,
      json: { body: null },
    });
  });
});

describe('formOf (application/x-www-form-urlencoded)', () => {
  const form = (text: string) => formOf({ kind: 'bytes', mediaType: '', bytes: Buffer.from(text) });

  it('reads each field once as a string, a repeated one as an array of its values', () => {
    expect(form('logout_token=a.b.c&x=1&x=2&x=3')).toEqual({
      logout_token: 'a.b.c',
      x: ['1', '2', '3'],
    });
    expect(form('a=%20b+c&%F0%9F%98%80=')).toEqual({ a: ' b c', '😀': '' });
  });

  it('reads an absent or blank body as undefined, and never throws on malformed escapes', () => {
    expect(formOf({ kind: 'none', mediaType: '' })).toBeUndefined();
    expect(form('  ')).toBeUndefined();
    expect(form('a=%ff%&%=b')).toEqual({ a: '\ufffd%', '%': 'b' });
  });

  it('keeps __proto__ a field like any other', () => {
    const fields = form('__proto__=x&constructor=y');
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.keys(fields ?? {})).toEqual(['__proto__', 'constructor']);
  });
});
