import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccountDirectory } from './account-directory.js';
import type { DevAccountView } from './dev-identity-options.js';
import type { EnvironmentProvider } from './environment-provider.js';
import { html, type SafeHtml } from './html.js';
import { readForm, sendPage } from './http-io.js';
import { describedBy, fieldNotes, renderPage } from './page-layout.js';
import { minimumPasswordLength, newPasswordProblem, passwordRule } from './passwords.js';
import { errorMessage } from './sign-in-pages.js';

/**
 * `/account?env=<KEY>` (default PROD), the accountManagementUrl of spec 2.5 (issuer origin +
 * `/account`): who is signed in to that environment's identity session, a form to change
 * the password (`POST /account/password?env=<KEY>`) and a way to sign out. Passwords and
 * sign-in methods are managed here, never at the gateway (spec 4.8).
 *
 * Signing out goes through the environment's end-session endpoint (oidc-provider's
 * RP-initiated logout, with its confirmation and xsrf token), so that ending the identity
 * session tells every client that signed in with it over back-channel logout.
 *
 * CSRF: the identity session cookie is SameSite=Lax, so a cross-site post arrives without it;
 * the form also carries a token bound to the session (HMAC with a per-process key).
 */
export type AccountPages = {
  show(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  changePassword(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
};

export const defaultAccountEnvironment = 'PROD';

type PasswordField = 'currentPassword' | 'newPassword' | 'newPasswordConfirmation';

/** What the page says after a form was sent: about the form, or beside one of its fields. */
type PageMessage = {
  error?: string;
  notice?: string;
  fieldErrors?: Partial<Record<PasswordField, string>>;
};

type AccountPageOptions = {
  environments: ReadonlyMap<string, EnvironmentProvider>;
  directory: AccountDirectory;
  csrfKey: Buffer;
};

export function createAccountPages(options: AccountPageOptions): AccountPages {
  return {
    async show(req, res, url) {
      const state = await accountState(options, req, res, url);
      if (state === undefined) sendUnknownEnvironment(options.environments, res, url);
      else sendAccountPage(options.environments, res, 200, state);
    },
    changePassword: (req, res, url) => changePassword(options, req, res, url),
  };
}

/** The environment named by `?env` and the account signed in to it, if any. */
type AccountState = {
  environment: EnvironmentProvider;
  signedIn: { account: DevAccountView; csrf: string } | undefined;
};

function csrfToken(csrfKey: Buffer, environmentKey: string, sessionId: string): string {
  return createHmac('sha256', csrfKey)
    .update(`account\0${environmentKey}\0${sessionId}`)
    .digest('base64url');
}

/** Undefined when `?env` names no environment. */
async function accountState(
  { environments, directory, csrfKey }: AccountPageOptions,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<AccountState | undefined> {
  const key = url.searchParams.get('env') ?? defaultAccountEnvironment;
  const environment = environments.get(key);
  if (environment === undefined) return undefined;
  const { provider } = environment;
  const sessionId = provider
    .createContext(req, res)
    .cookies.get(provider.cookieName('session'), { signed: true });
  const session = sessionId === undefined ? undefined : await provider.Session.find(sessionId);
  const accountId = session?.accountId;
  const account =
    accountId === undefined
      ? undefined
      : directory.findActive(environment.environment.key, accountId);
  return {
    environment,
    signedIn:
      account === undefined || sessionId === undefined
        ? undefined
        : { account, csrf: csrfToken(csrfKey, environment.environment.key, sessionId) },
  };
}

/**
 * Changes the signed-in account's password after the CSRF token, the new password's rules and
 * the current password are checked; each refusal shows the page again with its message.
 */
async function changePassword(
  options: AccountPageOptions,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const state = await accountState(options, req, res, url);
  if (state === undefined) {
    sendUnknownEnvironment(options.environments, res, url);
    return;
  }
  const render = (status: number, message: PageMessage) =>
    sendAccountPage(options.environments, res, status, state, message);
  const form = await readForm(req);
  const { signedIn } = state;
  if (signedIn === undefined || !sameToken(form.get('csrf') ?? '', signedIn.csrf)) {
    render(403, { error: 'Your session changed or expired. Sign in again and retry.' });
    return;
  }
  const newPassword = form.get('newPassword') ?? '';
  const problem = newPasswordProblem(newPassword, form.get('newPasswordConfirmation') ?? '');
  if (problem !== undefined) {
    const field = problem.field === 'password' ? 'newPassword' : 'newPasswordConfirmation';
    render(400, { fieldErrors: { [field]: problem.message } });
    return;
  }
  const outcome = await options.directory.changePassword(
    state.environment.environment.key,
    signedIn.account.subject,
    form.get('currentPassword') ?? '',
    newPassword,
  );
  if (outcome === 'changed') {
    render(200, { notice: 'Your password is changed.' });
    return;
  }
  const wrongPassword = 'The current password is not correct.';
  render(400, { fieldErrors: { currentPassword: wrongPassword } });
}

function sendAccountPage(
  environments: ReadonlyMap<string, EnvironmentProvider>,
  res: ServerResponse,
  status: number,
  state: AccountState,
  message: PageMessage = {},
): void {
  const { environment, signedIn } = state;
  const others = [...environments.values()].filter((other) => other !== environment);
  sendPage(
    res,
    status,
    renderPage(
      { title: 'Your account', subtitle: environment.label },
      html`${errorMessage(message.error)}${
          message.notice === undefined
            ? ''
            : html`<p class="notice" role="status">${message.notice}</p>`
        }
        ${signedIn === undefined ? notSignedIn() : accountDetails(signedIn.account)}
        ${signedIn === undefined ? '' : signOutLink(environment.mountPath)}
        <p>
          Your password and your sign-in methods are managed here, by the identity service, not by
          the applications you use. This development identity service offers one sign-in method:
          e-mail address and password.
        </p>
        ${
          signedIn === undefined
            ? ''
            : passwordForm(environment.environment.key, signedIn.csrf, message.fieldErrors)
        }
        ${
          others.length === 0
            ? ''
            : html`<p class="switch">Other environments: ${environmentLinks(others)}</p>`
        }`,
    ),
  );
}

function sendUnknownEnvironment(
  environments: ReadonlyMap<string, EnvironmentProvider>,
  res: ServerResponse,
  url: URL,
): void {
  sendPage(
    res,
    404,
    renderPage(
      { title: 'Your account' },
      html`${errorMessage(`There is no environment "${url.searchParams.get('env') ?? defaultAccountEnvironment}".`)}
        <p>Environments: ${environmentLinks([...environments.values()])}</p>`,
    ),
  );
}

function environmentLinks(list: readonly EnvironmentProvider[]) {
  return list.map(
    (environment, index) =>
      html`${index === 0 ? '' : ', '}<a
          href="/account?env=${encodeURIComponent(environment.environment.key)}"
          >${environment.label}</a
        >`,
  );
}

function notSignedIn() {
  return html`<p>
    You are not signed in to this environment. Sign in through an application that uses it, then
    come back.
  </p>`;
}

function accountDetails(account: DevAccountView) {
  return html`<dl>
    <dt>E-mail</dt>
    <dd>${account.email}</dd>
    <dt>E-mail status</dt>
    <dd>${account.emailVerified ? 'Verified' : 'Not verified'}</dd>
    ${
      account.name === undefined
        ? ''
        : html`<dt>Name</dt>
            <dd>${account.name}</dd>`
    }
    <dt>Subject</dt>
    <dd>${account.subject}</dd>
  </dl>`;
}

/** The environment's end-session endpoint, which asks to confirm and then ends the session. */
function signOutLink(mountPath: string): SafeHtml {
  return html`<p><a href="${mountPath}/session/end">Sign out</a></p>`;
}

function passwordForm(
  environmentKey: string,
  csrf: string,
  errors: PageMessage['fieldErrors'] = {},
): SafeHtml {
  const current = { error: errors.currentPassword };
  const next = { hint: passwordRule, error: errors.newPassword };
  const again = { error: errors.newPasswordConfirmation };
  return html`<form
    method="post"
    action="/account/password?env=${encodeURIComponent(environmentKey)}"
  >
    <input type="hidden" name="csrf" value="${csrf}" />
    <label for="currentPassword">Current password</label>
    <input
      id="currentPassword"
      name="currentPassword"
      type="password"
      autocomplete="current-password"
      required
      ${describedBy('currentPassword', current)}
    />
    ${fieldNotes('currentPassword', current)}
    <label for="newPassword">New password</label>
    <input
      id="newPassword"
      name="newPassword"
      type="password"
      autocomplete="new-password"
      minlength="${minimumPasswordLength}"
      required
      ${describedBy('newPassword', next)}
    />
    ${fieldNotes('newPassword', next)}
    <label for="newPasswordConfirmation">New password, again</label>
    <input
      id="newPasswordConfirmation"
      name="newPasswordConfirmation"
      type="password"
      autocomplete="new-password"
      minlength="${minimumPasswordLength}"
      required
      ${describedBy('newPasswordConfirmation', again)}
    />
    ${fieldNotes('newPasswordConfirmation', again)}
    <button type="submit">Change password</button>
  </form>`;
}

function sameToken(received: string, expected: string): boolean {
  const a = Buffer.from(received);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
