import { useCallback, useEffect, useState } from 'react';
import { ApiProblem, api, SESSION_ENDED_EVENT, unwrap } from '../api/client.js';

export type Session =
  | { state: 'loading' }
  | { state: 'signed-out'; ended: boolean }
  | { state: 'no-access'; email: string }
  | { state: 'admin'; email: string; userId: string }
  | { state: 'failed'; problem: unknown };

/**
 * Whether the gateway served this page to a request without a session cookie (console-pages.ts
 * in the edge): then nobody is signed in, and asking would only log a 401 in the console.
 */
function servedWithoutSession(): boolean {
  const meta = document.querySelector('meta[name="gateway-session"]');
  return meta?.getAttribute('content') === 'none';
}

/**
 * Who is signed in, from the gateway cookie: `GET /v1/users/me` says whether there is a
 * session (401: none), an admin read says whether it carries `platforms:admin` (403: no).
 * A page served without a session cookie is signed out without asking.
 */
export async function readSession(): Promise<Session> {
  if (servedWithoutSession()) return { state: 'signed-out', ended: false };
  let me;
  try {
    me = await unwrap(api.GET('/v1/users/me'));
  } catch (error) {
    if (error instanceof ApiProblem && error.status === 401)
      return { state: 'signed-out', ended: false };
    return { state: 'failed', problem: error };
  }
  try {
    await unwrap(api.GET('/v1/identity-environments'));
    return { state: 'admin', email: me.identity.email, userId: me.localUser.id };
  } catch (error) {
    if (error instanceof ApiProblem && error.status === 403) {
      return { state: 'no-access', email: me.identity.email };
    }
    return { state: 'failed', problem: error };
  }
}

export function useSession(): { session: Session; refresh: () => void } {
  const [session, setSession] = useState<Session>({ state: 'loading' });
  const refresh = useCallback(() => {
    void readSession().then(setSession);
  }, []);
  useEffect(() => {
    refresh();
    const ended = () => setSession({ state: 'signed-out', ended: true });
    window.addEventListener(SESSION_ENDED_EVENT, ended);
    return () => window.removeEventListener(SESSION_ENDED_EVENT, ended);
  }, [refresh]);
  return { session, refresh };
}

/** Logout (spec 4.6), then the identity service's end-session page when there is one. */
export async function signOut(): Promise<void> {
  const answer = await unwrap(api.POST('/v1/auth/logout', { body: {} }));
  window.location.assign(answer.logoutUrl ?? '/admin/');
}
