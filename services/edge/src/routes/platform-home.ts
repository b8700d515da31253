import { parse as parseQueryString } from 'node:querystring';
import type { ErrorPageOptions } from '../http/error-page.js';
import type { EdgeServices } from '../http/operation.js';
import { PLATFORM_KEY_PATTERN } from './registry-schemas.js';

/**
 * The error page of a start (spec 4.1) that the gateway refuses: its visitor is usually
 * signed out, so the account page would be a dead end. When the query names a known active
 * platform, the page leads back to that platform's registered home (the return URL of its
 * default redirect pair, spec 3); otherwise it offers advice and no link. Looked up in the
 * registry, where the start itself looks; a key that cannot be one is not looked up.
 */
export async function platformHomePage(
  query: string,
  services: EdgeServices,
): Promise<ErrorPageOptions> {
  const platformKey = parseQueryString(query).platformKey;
  if (typeof platformKey !== 'string' || !PLATFORM_KEY_PATTERN.test(platformKey)) return {};
  try {
    const { platform } = await services.clients.registry.getPlatform({ platformKey });
    if (platform === undefined || platform.status !== 'active') return {};
    const pair =
      platform.redirectPairs.find((candidate) => candidate.isDefault) ?? platform.redirectPairs[0];
    if (pair === undefined || !isWebAddress(pair.returnUrl)) return {};
    return { platformHome: { url: pair.returnUrl, name: platform.displayName || platformKey } };
  } catch {
    // An unknown platform, or a registry that does not answer: advice without a link.
    return {};
  }
}

function isWebAddress(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const { protocol } = new URL(url);
  return protocol === 'https:' || protocol === 'http:';
}
