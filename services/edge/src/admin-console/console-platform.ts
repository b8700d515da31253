import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { fromConnectError } from '@gateway/errors';

/**
 * The platform the admin console signs in through (docs/decisions.md, "The admin console").
 * Its one redirect pair points at the console on the gateway's own origin, and it is an
 * admin console (`adminConsole`), so its sessions carry a platform_admin's permissions. The
 * handoff code that reaches its callback is never redeemed: the console works with the
 * gateway cookie the callback set, and its BFF key, issued with the platform, is never kept.
 */
export const ADMIN_CONSOLE_PLATFORM_KEY = 'ADMIN_CONSOLE';

/** Where the console lives on the gateway: `{base_url}/admin/`. */
export const ADMIN_CONSOLE_PATH = '/admin/';
/** The console pair's callback: answered by a redirect to the console (pages.ts). */
export const ADMIN_CONSOLE_CALLBACK_PATH = '/admin/signed-in';

export type ConsolePlatformState = 'created' | 'registered' | 'inactive';

/**
 * Registers the console's platform when the registry does not have it, as the system (the
 * record `platform.created` names the actor `system` / `edge`). It runs on an anonymous GET
 * (`/admin/sign-in`), and that is safe because nothing of the request goes into the write:
 * the key, the pair (from the configured base URL) and the settings are fixed, so a visitor
 * can only cause the one platform the configuration describes to exist. It never changes a
 * platform that exists: one an admin edited, deactivated or archived stays as it is (the
 * console then cannot sign in, and says so). Concurrent first visits, on one edge or many,
 * race on the registry's unique platform key: one creates it, the others' creates are
 * refused (409) and they read the platform the winner made, so there is never a second one.
 */
export async function ensureConsolePlatform(
  registry: Pick<Client<typeof RegistryService>, 'getPlatform' | 'createPlatform'>,
  baseUrl: string,
  requestId: string,
): Promise<ConsolePlatformState> {
  const existing = await consolePlatformState(registry);
  if (existing !== undefined) return existing;
  try {
    await registry.createPlatform({
      context: {
        actor: { kind: 'system', subject: 'edge', clientId: '', environmentKey: '', email: '' },
        requestId,
      },
      platformKey: ADMIN_CONSOLE_PLATFORM_KEY,
      displayName: 'Admin console',
      redirectPairs: [
        {
          label: 'console',
          returnUrl: consoleUrl(baseUrl, ADMIN_CONSOLE_PATH),
          callbackUrl: consoleUrl(baseUrl, ADMIN_CONSOLE_CALLBACK_PATH),
          isDefault: true,
        },
      ],
      defaultOnboardingMode: 'none',
      centralOnboardingEnabled: false,
      metadata: { createdBy: 'the gateway, at the first sign-in to /admin/' },
      adminConsole: true,
    });
    return 'created';
  } catch (error) {
    if (fromConnectError(error).code !== 'CONFLICT') throw error;
    // Another visit registered it first: its platform, as it is now.
    return (await consolePlatformState(registry)) ?? 'inactive';
  }
}

/** The state of the console's platform, or undefined when the registry has none. */
async function consolePlatformState(
  registry: Pick<Client<typeof RegistryService>, 'getPlatform'>,
): Promise<Exclude<ConsolePlatformState, 'created'> | undefined> {
  try {
    const { platform } = await registry.getPlatform({ platformKey: ADMIN_CONSOLE_PLATFORM_KEY });
    return platform?.status === 'active' ? 'registered' : 'inactive';
  } catch (error) {
    if (fromConnectError(error).code === 'NOT_FOUND') return undefined;
    throw error;
  }
}

/** An absolute URL of the console on the gateway's public origin. */
export function consoleUrl(baseUrl: string, path: string): string {
  return new URL(path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}
