import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCookieJar, type CookieJar } from '@gateway/testkit';
import { createDevIdentityService, type DevIdentityService } from '../dev-identity-service.js';
import type {
  DevAccount,
  DevClient,
  DevEnvironment,
  DevIdentityServiceOptions,
} from '../dev-identity-options.js';

export const testAudience = 'http://localhost:8080';
export const gatewayClient: DevClient = {
  clientId: 'gateway',
  clientSecret: 'gateway-secret-for-tests',
  redirectUris: ['http://localhost:8080/v1/auth/callback'],
  postLogoutRedirectUris: ['http://localhost:8080/v1/auth/logged-out'],
  grantTypes: ['authorization_code', 'refresh_token'],
};
export const machineClient: DevClient = {
  clientId: 'admin-cli',
  clientSecret: 'admin-cli-secret-for-tests',
  redirectUris: [],
  postLogoutRedirectUris: [],
  grantTypes: ['client_credentials'],
};
export const testEnvironments: DevEnvironment[] = [
  { key: 'PROD', displayName: 'Deployment', clients: [gatewayClient, machineClient] },
  { key: 'PARTNER', displayName: 'Partner', clients: [gatewayClient] },
];
export const testAccounts: DevAccount[] = [
  {
    environmentKey: 'PROD',
    email: 'alice@example.com',
    password: 'alice-password',
    emailVerified: true,
    name: 'Alice Example',
    picture: 'https://example.com/alice.png',
  },
  {
    environmentKey: 'PROD',
    email: 'bob@example.com',
    password: 'bob-password',
    emailVerified: false,
  },
  {
    environmentKey: 'PROD',
    email: 'carol@example.com',
    password: 'carol-password',
    emailVerified: true,
    status: 'suspended',
  },
  {
    environmentKey: 'PARTNER',
    email: 'alice@example.com',
    password: 'alice-partner-password',
    emailVerified: true,
    name: 'Alice at Partner',
  },
];
export const testServiceKey = 'a-service-key-of-at-least-32-characters!';

export type RunningDevIdentity = {
  origin: string;
  service: DevIdentityService;
  issuer(environmentKey: string): string;
  close(): Promise<void>;
};

/**
 * The service on 127.0.0.1 behind a bare Node server (publicOrigin = the listening origin).
 * `mount` puts it behind a wrapper that mounts it like Express does (`req.url` relative,
 * `req.originalUrl` full) and passes unknown paths on to a 418 answer.
 */
export async function startDevIdentity(
  overrides: Partial<DevIdentityServiceOptions> = {},
  options: { mount?: string } = {},
): Promise<RunningDevIdentity> {
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const service = await createDevIdentityService({
    publicOrigin: origin,
    environments: testEnvironments,
    accounts: testAccounts,
    audience: testAudience,
    serviceKey: testServiceKey,
    ...overrides,
  });
  const mount = options.mount;
  handle = (req, res) => {
    const passOn = () => {
      res.statusCode = 418;
      res.end('next');
    };
    const url = req.url ?? '/';
    if (mount === undefined) {
      service.handle(req, res, passOn);
    } else if (url.startsWith(`${mount}/`)) {
      Object.assign(req, { originalUrl: url, url: url.slice(mount.length) });
      service.handle(req, res, passOn);
    } else {
      passOn();
    }
  };
  return {
    origin,
    service,
    issuer: (environmentKey) => service.issuer(environmentKey),
    close: async () => {
      await service.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** fetch with a cookie jar and no automatic redirects, as a browser's network layer. */
export class Browser {
  readonly jar: CookieJar = createCookieJar();

  async get(url: string): Promise<Response> {
    return this.request(url, { method: 'GET' });
  }

  async post(url: string, form: Record<string, string>): Promise<Response> {
    return this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
  }

  /** Follows redirects from `response` until a page answers or `stopAt` is reached. */
  async follow(
    from: string,
    response: Response,
    stopAt: (url: URL) => boolean = () => false,
  ): Promise<{ url: string; response: Response }> {
    let url = from;
    let current = response;
    for (let hop = 0; hop < 10; hop += 1) {
      const location = current.headers.get('location');
      if (current.status < 300 || current.status >= 400 || location === null) {
        return { url, response: current };
      }
      const next = new URL(location, url);
      await current.body?.cancel();
      url = next.href;
      if (stopAt(next)) return { url, response: current };
      current = await this.get(url);
    }
    throw new Error(`Too many redirects from ${from}`);
  }

  private async request(url: string, init: RequestInit): Promise<Response> {
    const cookie = this.jar.headerFor(url);
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    });
    this.jar.store(url, response);
    return response;
  }
}

export type AuthorizationRequest = {
  issuer: string;
  client?: DevClient;
  scope?: string;
  resource?: string;
  extra?: Record<string, string>;
};

export type StartedAuthorization = {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
  /** Where the browser stopped: the sign-in or registration page, or the client's callback. */
  url: string;
  response: Response;
};

/** GET the authorization endpoint (code + PKCE S256) and follow to the first page. */
export async function startAuthorization(
  browser: Browser,
  request: AuthorizationRequest,
): Promise<StartedAuthorization> {
  const client = request.client ?? gatewayClient;
  const redirectUri = client.redirectUris[0] as string;
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const nonce = randomBytes(16).toString('base64url');
  const url = new URL(`${request.issuer}/auth`);
  url.search = new URLSearchParams({
    client_id: client.clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: request.scope ?? 'openid profile email',
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...(request.resource === undefined ? {} : { resource: request.resource }),
    ...request.extra,
  }).toString();
  const first = await browser.get(url.href);
  const landed = await browser.follow(url.href, first, (next) => isRedirectUri(next, redirectUri));
  return { state, nonce, verifier, redirectUri, ...landed };
}

export function isRedirectUri(url: URL, redirectUri: string): boolean {
  return `${url.origin}${url.pathname}` === redirectUri;
}

/** A form of a page: its absolute action and its named inputs with their values. */
export type PageForm = { action: string; fields: Record<string, string> };

/** The forms of an HTML page, keyed by the last path segment of their action. */
export function formsOf(page: string, pageUrl: string): Map<string, PageForm> {
  const forms = new Map<string, PageForm>();
  for (const match of page.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const attributes = match[1] ?? '';
    const action = unescapeHtml(/\saction="([^"]*)"/.exec(attributes)?.[1] ?? '');
    const absolute = new URL(action, pageUrl);
    const fields: Record<string, string> = {};
    for (const input of (match[2] ?? '').matchAll(/<input\b([^>]*)>/g)) {
      const name = /\sname="([^"]*)"/.exec(input[1] ?? '')?.[1];
      if (name !== undefined) {
        fields[name] = unescapeHtml(/\svalue="([^"]*)"/.exec(input[1] ?? '')?.[1] ?? '');
      }
    }
    const key = absolute.pathname.split('/').pop() ?? '';
    forms.set(key, { action: absolute.href, fields });
  }
  return forms;
}

export function unescapeHtml(value: string): string {
  return value
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/**
 * Fills and posts a form of the page the authorization stopped at, then follows redirects
 * to the client's callback. Returns the callback URL, or the page that answered instead.
 */
export async function submitAndFollow(
  browser: Browser,
  at: { url: string; page: string; redirectUri: string },
  formName: string,
  fields: Record<string, string>,
): Promise<{ callback?: URL; url: string; response: Response }> {
  const form = formsOf(at.page, at.url).get(formName);
  if (form === undefined) throw new Error(`No ${formName} form on ${at.url}:\n${at.page}`);
  const posted = await browser.post(form.action, { ...form.fields, ...fields });
  const landed = await browser.follow(form.action, posted, (next) =>
    isRedirectUri(next, at.redirectUri),
  );
  const landedUrl = new URL(landed.url);
  return isRedirectUri(landedUrl, at.redirectUri) ? { callback: landedUrl, ...landed } : landed;
}

export function basicAuthorization(client: DevClient): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret)}`).toString('base64')}`;
}

export async function tokenRequest(
  issuer: string,
  client: DevClient,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${issuer}/oauth2/token`, {
    method: 'POST',
    headers: {
      authorization: basicAuthorization(client),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * A whole sign-in as a browser does it, through the service's sign-in page, then the code
 * exchange with client_secret_basic. Returns the token response and the browser (with its
 * identity session).
 */
export async function signInAndExchange(
  request: AuthorizationRequest & { email: string; password: string; browser?: Browser },
): Promise<{ browser: Browser; tokens: Record<string, unknown>; nonce: string }> {
  const browser = request.browser ?? new Browser();
  const client = request.client ?? gatewayClient;
  const started = await startAuthorization(browser, request);
  let callback: URL;
  if (isRedirectUri(new URL(started.url), started.redirectUri)) {
    callback = new URL(started.url); // an identity session already existed
  } else {
    const page = await started.response.text();
    const result = await submitAndFollow(
      browser,
      { url: started.url, page, redirectUri: started.redirectUri },
      'login',
      { email: request.email, password: request.password },
    );
    if (result.callback === undefined) {
      throw new Error(`Sign-in failed: ${result.response.status} ${await result.response.text()}`);
    }
    callback = result.callback;
  }
  if (callback.searchParams.get('state') !== started.state) throw new Error('state mismatch');
  const code = callback.searchParams.get('code');
  if (code === null) throw new Error(`No code: ${callback.href}`);
  const { status, body } = await tokenRequest(request.issuer, client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: started.redirectUri,
    code_verifier: started.verifier,
  });
  if (status !== 200) throw new Error(`Token request refused: ${status} ${JSON.stringify(body)}`);
  return { browser, tokens: body, nonce: started.nonce };
}
