// SessionIntrospectionService: each session of a call introspected as IntrospectSession does.
import { describe, expect, it } from '@jest/globals';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { SessionIntrospectionService } from '@gateway/contracts';
import { implementationOf, routesOf } from '@gateway/rpc';
import { createSessionIntrospection } from './session-introspection.js';

/** Its client as over the wire (Connect's router transport), with `introspectSession` behind it. */
function clientOf(introspectSession: (request: { token: string }) => Promise<object>) {
  const implementation = createSessionIntrospection({ introspectSession } as never);
  return createClient(
    SessionIntrospectionService,
    createRouterTransport(
      routesOf([implementationOf(SessionIntrospectionService, implementation)]),
    ),
  );
}

describe('createSessionIntrospection', () => {
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
