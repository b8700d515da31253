import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { DevClient } from './dev-identity-options.js';
import {
  Browser,
  formsOf,
  gatewayClient,
  signInAndExchange,
  startDevIdentity,
  testEnvironments,
  type RunningDevIdentity,
} from './testing/dev-identity-harness.js';

// OpenID Connect Back-Channel Logout 1.0, sent: signing out at the account page ends the
// identity session through the provider's end-session endpoint, and the provider posts a
// logout token to the client that signed in with it, naming the session (`sid`) its ID token
// named. A plain server stands in for the client's back-channel logout endpoint.

type Received = { contentType: string | undefined; body: string };

let identity: RunningDevIdentity;
let receiver: Server;
const received: Received[] = [];
let client: DevClient;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ contentType: req.headers['content-type'], body });
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  client = { ...gatewayClient, backchannelLogoutUri: `http://localhost:${port}/logout/PROD` };
  identity = await startDevIdentity({
    environments: testEnvironments.map((environment) => ({
      ...environment,
      clients: environment.key === 'PROD' ? [client] : environment.clients,
    })),
  });
});

afterAll(async () => {
  await identity?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

describe('signing out at the account page', () => {
  it('posts a logout token naming the session of the ID token to the client', async () => {
    const issuer = identity.issuer('PROD');
    const { browser, tokens } = await signInAndExchange({
      issuer,
      client,
      email: 'alice@example.com',
      password: 'alice-password',
    });
    const idToken = decodeJwt(String(tokens.id_token));
    // backchannel_logout_session_required: the ID token names the identity session.
    expect(typeof idToken.sid).toBe('string');

    const accountUrl = `${identity.origin}/account?env=PROD`;
    const account = await (await browser.get(accountUrl)).text();
    const signOut = /<a href="([^"]*)">Sign out<\/a>/.exec(account)?.[1];
    expect(signOut).toBe('/api/auth/env/PROD/session/end');
    const confirmUrl = new URL(signOut ?? '', accountUrl).href;
    const confirmation = await (await browser.get(confirmUrl)).text();
    expect(confirmation).toContain('You are signed in as <strong>alice@example.com</strong>');
    const form = formsOf(confirmation, confirmUrl).get('confirm');
    expect(form).toBeDefined();
    const ended = await browser.post(form?.action ?? '', { ...form?.fields, logout: 'yes' });
    const landed = await browser.follow(form?.action ?? '', ended);
    expect(await landed.response.text()).toContain('You are signed out.');

    // The provider answers the browser only once the logout tokens were delivered.
    expect(received).toHaveLength(1);
    const [post] = received;
    expect(post?.contentType).toBe('application/x-www-form-urlencoded');
    const logoutToken = new URLSearchParams(post?.body).get('logout_token') ?? '';
    const { payload, protectedHeader } = await jwtVerify(
      logoutToken,
      createRemoteJWKSet(new URL(`${issuer}/jwks`)),
      { issuer, audience: client.clientId, typ: 'logout+jwt' },
    );
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(payload).toMatchObject({
      sub: idToken.sub,
      sid: idToken.sid,
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    });
    expect(typeof payload.jti).toBe('string');
    expect(typeof payload.iat).toBe('number');
    expect(payload).not.toHaveProperty('nonce');

    // The identity session is over.
    expect(await (await browser.get(accountUrl)).text()).toContain(
      'You are not signed in to this environment.',
    );
  });

  it('offers no sign-out to a browser that is not signed in', async () => {
    const page = await (await new Browser().get(`${identity.origin}/account?env=PROD`)).text();
    expect(page).not.toContain('Sign out');
  });
});
