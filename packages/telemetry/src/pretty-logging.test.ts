import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chooseLogFormat, createLogger, createPrettyDestination } from './logger.js';
import { logHttpExchange } from './request-logging-middleware.js';

describe('chooseLogFormat', () => {
  it('is pretty only for a development process writing to a terminal, unless LOG_FORMAT says', () => {
    const choose = (nodeEnv: string, stdoutIsTerminal: boolean, configured?: 'json' | 'pretty') =>
      chooseLogFormat({ configured, nodeEnv, stdoutIsTerminal });
    expect(choose('development', true)).toBe('pretty');
    expect(choose('development', false)).toBe('json');
    expect(choose('production', true)).toBe('json');
    expect(choose('test', true)).toBe('json');
    expect(choose('development', true, 'json')).toBe('json');
    expect(choose('production', false, 'pretty')).toBe('pretty');
  });
});

describe('the pretty log', () => {
  let server: Server;
  let url: string;
  let lines: string[];
  let status = 200;
  let finished: Promise<void> = Promise.resolve();

  const prettyLogger = (level: string) => {
    lines = [];
    return createLogger({
      service: 'gateway',
      level,
      format: 'pretty',
      destination: createPrettyDestination({
        level,
        colorize: false,
        write: (text) => void lines.push(...text.trimEnd().split('\n')),
      }),
    });
  };
  let logger = prettyLogger('info');

  beforeAll(async () => {
    server = createServer((req, res) => {
      logHttpExchange(logger, req, res, { path: req.url ?? '/', requestId: () => 'req-1' });
      // Listeners run in order: once this one runs, the request line has been written.
      finished = new Promise((resolve) => res.once('finish', () => resolve()));
      res.statusCode = status;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const request = async (path: string, answer: number) => {
    status = answer;
    await (await fetch(`${url}${path}`)).arrayBuffer();
    await finished;
  };

  it('writes one readable line per entry: time, level, message and fields, without pid or hostname', () => {
    logger = prettyLogger('info');
    logger.info({ port: 8080, database: 'pglite' }, 'gateway listening');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: gateway listening \{.*"port":8080/);
    expect(lines[0]).not.toContain('hostname');
    expect(lines[0]).not.toContain('"pid"');
    expect(() => JSON.parse(lines[0] ?? '')).toThrow();
  });

  it('hides successful request lines at the info level, so the start banner stays on screen', async () => {
    logger = prettyLogger('info');
    await request('/health/live', 200);
    await request('/v1/auth/start', 302);
    logger.info('still here');
    expect(lines).toEqual([expect.stringContaining('still here')]);
  });

  it('shows failed requests as one short line', async () => {
    logger = prettyLogger('info');
    await request('/v1/broken', 503);
    expect(lines).toEqual([expect.stringMatching(/ERROR: GET \/v1\/broken 503 \d+ ms$/)]);
  });

  it('shows every request as one short line at the debug level', async () => {
    logger = prettyLogger('debug');
    await request('/v1/auth/start', 302);
    expect(lines).toEqual([expect.stringMatching(/INFO: GET \/v1\/auth\/start 302 \d+ ms$/)]);
  });

  it('still redacts secrets', () => {
    logger = prettyLogger('info');
    logger.info({ clientSecret: 'do-not-print' }, 'key issued');
    expect(lines.join('\n')).not.toContain('do-not-print');
  });
});
