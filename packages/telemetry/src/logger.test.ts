import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger, REDACTED } from './logger.js';
import { shutdownTelemetry, startTelemetry } from './start-telemetry.js';
import type { Telemetry } from './start-telemetry.js';
import { createMemoryLog } from './testing/memory-log.js';
import { createMemorySpans } from './testing/memory-spans.js';

let telemetry: Telemetry;

beforeAll(() => {
  telemetry = startTelemetry({
    serviceName: 'logger-test',
    spanProcessors: [createMemorySpans().processor],
  });
});

afterAll(async () => {
  await shutdownTelemetry();
});

describe('createLogger', () => {
  it('writes JSON lines that carry the service, level and time', () => {
    const log = createMemoryLog();
    const logger = createLogger({ service: 'registry', destination: log.destination });

    logger.info({ platformKey: 'shop' }, 'platform created');

    expect(log.lines()).toEqual([
      expect.objectContaining({
        service: 'registry',
        level: 'info',
        msg: 'platform created',
        platformKey: 'shop',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      }),
    ]);
  });

  it('honours the level', () => {
    const log = createMemoryLog();
    const logger = createLogger({ service: 'edge', level: 'warn', destination: log.destination });

    logger.info('dropped');
    logger.warn('kept');

    expect(log.lines().map((line) => line.msg)).toEqual(['kept']);
  });

  it('adds trace_id and span_id of the active span, and nothing outside a span', async () => {
    const log = createMemoryLog();
    const logger = createLogger({ service: 'edge', destination: log.destination });

    logger.info('before');
    const ids = await telemetry.tracer.startActiveSpan('work', async (span) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.info('inside');
      span.end();
      return span.spanContext();
    });

    const [before, inside] = log.lines();
    expect(before).not.toHaveProperty('trace_id');
    expect(before).not.toHaveProperty('span_id');
    expect(inside).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId, trace_flags: '01' });
  });

  it('redacts credentials in request and response headers', () => {
    const log = createMemoryLog();
    const logger = createLogger({ service: 'edge', destination: log.destination });

    logger.info({
      req: {
        headers: {
          authorization: 'Basic c2hvcDpzM2NyZXQ=',
          cookie: 'svc_auth_session=session-cookie-value',
          'user-agent': 'curl/8',
        },
      },
      res: { headers: { 'set-cookie': 'svc_auth_session=new-session-value; HttpOnly' } },
    });

    const [line] = log.lines();
    expect(line?.req).toEqual({
      headers: { authorization: REDACTED, cookie: REDACTED, 'user-agent': 'curl/8' },
    });
    expect(line?.res).toEqual({ headers: { 'set-cookie': REDACTED } });
    expect(log.raw.join('')).not.toMatch(/c2hvcDpzM2NyZXQ|session-cookie-value|new-session-value/);
  });

  const secretFields = [
    'password',
    'clientSecret',
    'client_secret',
    'gatewayToken',
    'token',
    'state',
    'nonce',
    'id_token',
    'idToken',
    'secret',
  ];

  it.each(secretFields)('redacts %s one level down and at the top level', (field) => {
    const log = createMemoryLog();
    const logger = createLogger({ service: 'auth-flow', destination: log.destination });
    const secret = `secret-value-of-${field}`;

    logger.info({ [field]: secret, login: { [field]: secret, platformKey: 'shop' } });

    const [line] = log.lines();
    expect(line?.[field]).toBe(REDACTED);
    expect(line?.login).toEqual({ [field]: REDACTED, platformKey: 'shop' });
    expect(log.raw.join('')).not.toContain(secret);
  });

  it('redacts OAuth and handoff codes in request data but shows the code of an error', () => {
    const log = createMemoryLog();
    const logger = createLogger({ service: 'edge', destination: log.destination });
    const oauthCode = 'oauth-code-from-the-provider';
    const handoffCode = 'handoff_secret-value';
    const failure = Object.assign(new Error('refused'), { code: 'NONCE_MISMATCH' });

    logger.error({
      code: oauthCode,
      req: { query: { code: oauthCode, state: 'state-value' } },
      body: { code: handoffCode },
      handoffCode,
      err: failure,
    });

    const [line] = log.lines();
    expect(line?.code).toBe(REDACTED);
    expect(line?.req).toEqual({ query: { code: REDACTED, state: REDACTED } });
    expect(line?.body).toEqual({ code: REDACTED });
    expect(line?.handoffCode).toBe(REDACTED);
    expect(line?.err).toEqual(
      expect.objectContaining({ message: 'refused', code: 'NONCE_MISMATCH' }),
    );
    expect(log.raw.join('')).not.toMatch(/oauth-code-from|handoff_secret|state-value/);
  });

  it('leaves the object passed to it untouched', () => {
    const log = createMemoryLog();
    const logger = createLogger({ service: 'auth-flow', destination: log.destination });
    const fields = { session: { token: 'kept-in-memory' } };

    logger.info(fields);

    expect(fields.session.token).toBe('kept-in-memory');
  });
});
