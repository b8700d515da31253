// SessionIntrospectionService: each session of a call introspected as IntrospectSession does.
import { describe, expect, it } from '@jest/globals';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { SessionIntrospectionService } from '@gateway/contracts';
import { createSessionIntrospectionRoutes } from './session-introspection-routes.js';

/** The routes' client over Connect's router transport, with `introspectSession` behind it. */
function clientOf(introspectSession: (request: { token: string }) => Promise<object>) {
  return createClient(
    SessionIntrospectionService,
    createRouterTransport(createSessionIntrospectionRoutes({ introspectSession })),
  );
}

describe('createSessionIntrospectionRoutes', () => {
  it('answers each session in the order of the request', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The first session answers last: the answer still keeps the order of the request.
    const client = clientOf(async (request) => {
      if (request.token === 'first') await released;
      else release();
      return { active: request.token !== 'unknown', sessionId: `s-${request.token}` };
    });
    const answer = await client.introspectSessions({
      sessions: [
        { token: 'first', platformKey: 'SHOP' },
        { token: 'unknown', platformKey: 'SHOP' },
      ],
    });
    expect(answer.sessions.map(({ active, sessionId }) => ({ active, sessionId }))).toEqual([
      { active: true, sessionId: 's-first' },
      { active: false, sessionId: 's-unknown' },
    ]);
  });

  it('fails the call when an introspection fails', async () => {
    const client = clientOf(() => Promise.reject(new ConnectError('down', Code.Unavailable)));
    await expect(
      client.introspectSessions({ sessions: [{ token: 'a', platformKey: 'SHOP' }] }),
    ).rejects.toMatchObject({ code: Code.Unavailable });
  });
});
