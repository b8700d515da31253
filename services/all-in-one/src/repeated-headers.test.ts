import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// A request that carries a singleton header twice is refused, whatever the order: node's
// parser would keep the first Authorization, Content-Type or Host and drop the others, so the
// gateway would otherwise read such a request first-wins. Spec 7: 400 VALIDATION_ERROR with
// `{ code, message, details? }`. Raw HTTP/1.1, so that the headers go out exactly as written.

let t: GatewayUnderTest;
let port: number;
beforeAll(async () => {
  t = await startGatewayUnderTest();
  port = t.gateway.port;
});
afterAll(() => t.close());

type RawAnswer = { status: number; headers: string; body: string };

/** Sends `head` (lines without the final blank line) and `body`; reads until the close. */
function send(head: string[], body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const split = received.indexOf('\r\n\r\n');
      const headers = received.slice(0, split);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]),
        headers,
        body: received.slice(split + 4),
      });
    });
    socket.write([...head, 'Connection: close', '', body].join('\r\n'));
  });
}

const get = (path: string, headers: string[]) =>
  send([`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...headers]);

function expectRefusedNaming(answer: RawAnswer, header: string): void {
  expect(answer.status).toBe(400);
  expect(answer.headers).toMatch(/content-type: application\/json; charset=utf-8/i);
  expect(JSON.parse(answer.body)).toEqual({
    code: 'VALIDATION_ERROR',
    message: `The ${header} header is repeated.`,
    details: { header: header.toLowerCase() },
  });
}

describe('two Authorization headers', () => {
  it('are accepted one at a time (the admin token alone answers 200)', async () => {
    const answer = await get('/v1/platforms', [`Authorization: Bearer ${t.adminToken}`]);
    expect(answer.status).toBe(200);
  });

  it.each([
    ['the admin token first', () => [`Bearer ${t.adminToken}`, 'Bearer x']],
    ['the admin token second', () => ['Bearer x', `Bearer ${t.adminToken}`]],
    [
      'the same token twice, in other cases',
      () => [`Bearer ${t.adminToken}`, `Bearer ${t.adminToken}`],
    ],
  ])('are refused with 400 VALIDATION_ERROR: %s', async (_order, values) => {
    const [first, second] = values();
    const answer = await get('/v1/platforms', [
      `Authorization: ${first ?? ''}`,
      `AUTHORIZATION: ${second ?? ''}`,
    ]);
    expectRefusedNaming(answer, 'Authorization');
  });

  it('are refused on a public operation too (health)', async () => {
    const answer = await get('/health/live', [
      'Authorization: Bearer a',
      'Authorization: Bearer b',
    ]);
    expectRefusedNaming(answer, 'Authorization');
  });
});

describe('other singleton headers', () => {
  const body = JSON.stringify({ platformKey: 'TWICE', displayName: 'Twice' });

  it.each([
    ['application/json first', ['application/json', 'text/plain']],
    ['application/json second', ['text/plain', 'application/json']],
  ])('two Content-Type headers are refused: %s', async (_order, [first, second]) => {
    const answer = await send(
      [
        'POST /v1/platforms HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `Authorization: Bearer ${t.adminToken}`,
        `Content-Type: ${first}`,
        `Content-Type: ${second}`,
        `Content-Length: ${Buffer.byteLength(body)}`,
      ],
      body,
    );
    expectRefusedNaming(answer, 'Content-Type');
    const platform = await t.call('GET', '/v1/platforms/TWICE');
    expect(platform.status).toBe(404);
  });

  it('two Content-Length headers are refused with 400 and the error body', async () => {
    const answer = await send(
      [
        'POST /v1/platforms HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `Authorization: Bearer ${t.adminToken}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `Content-Length: ${Buffer.byteLength(body)}`,
      ],
      body,
    );
    // Node's parser refuses it before the gateway's listener runs; the edge's clientError
    // listener answers with the spec's body.
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('two Host headers are refused with 400 VALIDATION_ERROR', async () => {
    const answer = await send([
      'GET /health/live HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Host: example.com',
    ]);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
