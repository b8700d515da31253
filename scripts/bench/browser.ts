import { createHash, randomBytes } from 'node:crypto';
import { createCookieJar, followProviderPages } from '@gateway/testkit';

// What a browser does at an oidc-provider whose development login and consent pages are on
// (the testkit's provider and the bench's peer): the testkit's followProviderPages follows its
// redirects, answers the login form (any password) and the consent form, and stops at the
// first redirect away from the provider. A browser keeps its cookie jar, so its second
// sign-in finds an identity session and a grant and goes straight back (a returning user).

export type ProviderBrowser = {
  /** Follows the provider's pages from `startUrl`; answers the URL it sends the browser to. */
  visit(startUrl: string, accountId: string): Promise<URL>;
};

export function providerBrowser(providerOrigin: string): ProviderBrowser {
  const jar = createCookieJar();
  return {
    visit: (startUrl, accountId) =>
      followProviderPages({
        startUrl,
        accountId,
        jar,
        isDone: (url) => url.origin !== providerOrigin,
      }),
  };
}

/** PKCE pair (S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const basicAuthorization = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
