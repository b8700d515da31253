import { createHash, randomBytes } from 'node:crypto';
import { createCookieJar, type CookieJar } from '@gateway/testkit';

// What a browser does at an oidc-provider whose development login and consent pages are on:
// follow its redirects, answer the login form (any password) and the consent form, and stop
// at the first redirect away from the provider. A browser keeps its cookie jar, so its second
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

async function followProviderPages(request: {
  startUrl: string;
  accountId: string;
  jar: CookieJar;
  isDone: (url: URL) => boolean;
}): Promise<URL> {
  const { jar } = request;
  let url = request.startUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 12; step += 1) {
    const cookie = jar.headerFor(url);
    const response = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        ...(cookie === undefined ? {} : { cookie }),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body: form,
    });
    jar.store(url, response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      const next = new URL(location, url);
      if (request.isDone(next)) return next;
      url = next.href;
      form = undefined;
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*\saction="([^"]*)"/.exec(html)?.[1];
    const prompt = /<input[^>]*name="prompt"[^>]*value="([^"]*)"/.exec(html)?.[1];
    if (response.status !== 200 || action === undefined || prompt === undefined) {
      throw new Error(`Unexpected page from the identity provider: ${response.status} ${html}`);
    }
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    form =
      prompt === 'login'
        ? new URLSearchParams({ prompt, login: request.accountId, password: 'any' })
        : new URLSearchParams({ prompt });
  }
  throw new Error('The identity provider did not send the browser back');
}

/** PKCE pair (S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const basicAuthorization = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
