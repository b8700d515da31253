import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import type { AuthFlowSettings } from './auth-flow-deps.js';

/** What the policy needs of a session: its platform, creation time and permission snapshot. */
export type SessionOfPlatform = {
  platformKey: string | null;
  /** Epoch milliseconds; undefined when unknown (a pending handoff's session). */
  createdAt: number | undefined;
  permissions: readonly string[];
};

/**
 * The permissions a session can exercise now, or undefined when it may not act at all.
 *
 * A session created by a platform's login acts only while that platform is active and was
 * created after its last deactivation or archive (the registry records that instant in the
 * same transaction as the change). It carries its permission snapshot (spec 2.6: taken at
 * its creation, always empty outside the deployment environment; spec 3.3: emptied at once
 * when platform_admin is revoked), whatever platform it came from: spec 5 accepts "a cookie
 * session of a deployment-environment platform_admin" on admin endpoints, and spec 4.4's
 * exchange answers the snapshot. With ADMIN_POWER_CONSOLE_ONLY (hardening beyond the spec,
 * docs/decisions.md) only an admin console's sessions (`adminConsole`) carry it; the
 * others exercise none. A session signed in at the gateway itself (no platform) always keeps
 * its snapshot.
 *
 * The policy comes from the auth-flow's registry answers cache (registry-answers-cache.ts),
 * dropped whenever the change feed announces a registry change: a deactivation applies as
 * soon as the edge that made it announces it (at once in its own process, over Redis pub/sub
 * in the others), and at the latest when the cache's TTL ends should an announcement be
 * lost. The end is durable: `sessions_not_before` stays when the platform is reactivated.
 */
export async function exercisablePermissions(
  registry: Pick<Client<typeof RegistryService>, 'getPlatformSessionPolicy'>,
  session: SessionOfPlatform,
  settings: Pick<AuthFlowSettings, 'adminPowerConsoleOnly'>,
): Promise<string[] | undefined> {
  if (session.platformKey === null) return [...session.permissions];
  const policy = await registry.getPlatformSessionPolicy({ platformKey: session.platformKey });
  if (!policy.sessionsAllowed) return undefined;
  if (session.createdAt !== undefined && session.createdAt < Number(policy.sessionsNotBeforeMs)) {
    return undefined;
  }
  return !settings.adminPowerConsoleOnly || policy.adminConsole ? [...session.permissions] : [];
}
