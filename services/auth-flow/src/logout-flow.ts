import type { AuthFlowDeps } from './auth-flow-deps.js';
import type { EnvironmentClients } from './environment-clients.js';
import { openIdToken } from './id-token-sealing.js';
import { relyingPartyOf } from './identity-provider-client.js';
import { createSecurityAudit } from './security-audit.js';
import { hashCredential } from './store/slot-tags.js';

/** Spec 8: the logout `state` is valid for 1 hour. */
const LOGOUT_STATE_TTL_MS = 60 * 60 * 1000;
const LOGOUT_STATE_PURPOSE = 'logout-state';

export type LogoutFlow = ReturnType<typeof createLogoutFlow>;

export function createLogoutFlow(deps: AuthFlowDeps, environments: EnvironmentClients) {
  const now = deps.now ?? (() => new Date());
  const { settings, store, keyring } = deps;
  const audit = createSecurityAudit(deps.registry);
  const fallbackDestination = () =>
    settings.identityPostLogoutRedirectUri ?? settings.accountCenterUrl ?? `${settings.baseUrl}/`;

  /**
   * Spec 4.6: revokes the session first, in every case; then works out the destination and
   * the identity provider's end-session URL. `null` when there was no live session or the
   * environment has no reachable end-session endpoint.
   */
  async function logout(request: {
    sessionToken: string | undefined;
    returnTo: string | undefined;
  }) {
    if (request.sessionToken === undefined) return { logoutUrl: null };
    const session = await store.revokeSession(
      hashCredential(request.sessionToken),
      now().getTime(),
    );
    if (session === undefined) return { logoutUrl: null };
    await audit.logout(session);
    const client = await environments.get(session.environmentKey);
    let destination: string;
    if (session.platformKey !== null) {
      // INVALID_REDIRECT / FORBIDDEN from here reach the caller after the revocation.
      destination = (
        await deps.registry.resolveReturnTo({
          platformKey: session.platformKey,
          ...(request.returnTo === undefined ? {} : { returnTo: request.returnTo }),
        })
      ).returnTo;
    } else {
      destination =
        client.postLogoutRedirectUri ?? settings.accountCenterUrl ?? fallbackDestination();
    }
    const { idTokenEncrypted } = session;
    if (idTokenEncrypted === null) return { logoutUrl: null };
    const logoutUrl = await relyingPartyOf(deps).endSessionUrl(client, () => ({
      id_token_hint: openIdToken(keyring, idTokenEncrypted, session),
      post_logout_redirect_uri: `${settings.baseUrl}/v1/auth/logged-out`,
      state: keyring.encrypt(
        JSON.stringify({ d: destination, e: now().getTime() + LOGOUT_STATE_TTL_MS }),
        LOGOUT_STATE_PURPOSE,
      ),
    }));
    return { logoutUrl: logoutUrl ?? null };
  }

  /** Spec 4.7: the destination held in `state`; the fallback when it is missing, tampered or expired. */
  function completeLogout(request: { state: string }): { redirectUrl: string } {
    try {
      const held = JSON.parse(keyring.decryptString(request.state, LOGOUT_STATE_PURPOSE)) as {
        d?: unknown;
        e?: unknown;
      };
      if (typeof held.d === 'string' && typeof held.e === 'number' && held.e > now().getTime()) {
        return { redirectUrl: held.d };
      }
    } catch {
      // Tampered or not ours: fall back.
    }
    return { redirectUrl: fallbackDestination() };
  }

  return { logout, completeLogout };
}
