import { providerBrowser, type ProviderBrowser } from './browser.js';

/** Where a platform's users sign in: the gateway, its identity provider, one platform. */
export type LoginTarget = {
  gatewayUrl: string;
  providerOrigin: string;
  platformKey: string;
  returnTo: string;
  /** `Basic ...` of the BFF key of the pair whose callback receives the codes. */
  bffAuthorization: string;
};

export type SignedIn = {
  /** `handoff_...`, not yet redeemed. */
  code: string;
  /** The gateway session token the callback set as the `svc_auth_session` cookie. */
  sessionToken: string;
};

/**
 * One sign-in as a browser does it: start (302 to authorize) → the identity provider's pages
 * → the gateway callback (302 to the platform callback with `code=handoff_...`).
 */
export async function signIn(
  target: LoginTarget,
  browser: ProviderBrowser,
  accountId: string,
): Promise<SignedIn> {
  const start = await fetch(
    `${target.gatewayUrl}/v1/auth/start?platformKey=${target.platformKey}&returnTo=${encodeURIComponent(target.returnTo)}`,
    { redirect: 'manual' },
  );
  const authorize = start.headers.get('location');
  await start.body?.cancel();
  if (start.status !== 302 || authorize === null) {
    throw new Error(`start answered ${start.status}`);
  }
  const back = await browser.visit(authorize, accountId);
  const callback = await fetch(`${target.gatewayUrl}/v1/auth/callback${back.search}`, {
    redirect: 'manual',
  });
  const landed = callback.headers.get('location');
  const text = await callback.text();
  if (callback.status !== 302 || landed === null) {
    throw new Error(`callback answered ${callback.status}: ${text}`);
  }
  const code = new URL(landed).searchParams.get('code');
  if (code === null || !code.startsWith('handoff_')) {
    throw new Error(`callback sent the browser to ${landed}`);
  }
  const cookie = callback.headers
    .getSetCookie()
    .find((value) => value.startsWith('svc_auth_session='));
  const sessionToken = decodeURIComponent(
    (cookie ?? '').split(';')[0]?.slice('svc_auth_session='.length) ?? '',
  );
  if (sessionToken === '') throw new Error('callback set no session cookie');
  return { code, sessionToken };
}

/** The platform backend's half: redeems a code with the BFF key. */
export async function exchange(
  target: LoginTarget,
  code: string,
): Promise<{ status: number; gatewayToken?: string }> {
  const response = await fetch(`${target.gatewayUrl}/v1/auth/exchange`, {
    method: 'POST',
    headers: { authorization: target.bffAuthorization, 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  const body = (await response.json()) as { session?: { gatewayToken?: string } };
  return { status: response.status, gatewayToken: body.session?.gatewayToken };
}

/**
 * Signs in as fast as it can with `workers` concurrent browsers until `enough()` or the
 * deadline: each worker cycles through browsers of its own, one per account, so after each
 * account's first sign-in (login and consent pages) the identity provider answers at once.
 * Worker i signs in at `targets[i % targets.length]`.
 */
export async function seedSignIns(options: {
  targets: readonly LoginTarget[];
  workers: number;
  accounts: number;
  deadline: number;
  enough: (count: number) => boolean;
  onSignedIn: (signedIn: SignedIn) => void;
}): Promise<{ count: number; failures: number; firstError?: string; seconds: number }> {
  const startedAt = Date.now();
  let count = 0;
  let failures = 0;
  let firstError: string | undefined;
  const worker = async (index: number) => {
    const target = options.targets[index % options.targets.length] as LoginTarget;
    const browsers: { browser: ProviderBrowser; accountId: string }[] = [];
    for (let account = index; account < options.accounts; account += options.workers) {
      browsers.push({
        browser: providerBrowser(target.providerOrigin),
        accountId: `user-${account + 1}`,
      });
    }
    if (browsers.length === 0) {
      browsers.push({
        browser: providerBrowser(target.providerOrigin),
        accountId: `user-${(index % options.accounts) + 1}`,
      });
    }
    for (let turn = 0; Date.now() < options.deadline && !options.enough(count); turn += 1) {
      const { browser, accountId } = browsers[turn % browsers.length] as (typeof browsers)[0];
      try {
        const signedIn = await signIn(target, browser, accountId);
        count += 1;
        options.onSignedIn(signedIn);
      } catch (error) {
        failures += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
        if (failures > 20 && failures > count / 100) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: options.workers }, (_, index) => worker(index)));
  return { count, failures, firstError, seconds: (Date.now() - startedAt) / 1000 };
}
