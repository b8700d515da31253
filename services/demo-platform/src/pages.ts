import type { AccountSession, ExchangeResult, IntrospectedSession } from '@gateway/platform-sdk';
import { html, type HtmlValue, type SafeHtml } from './html.js';

/**
 * The demo platform's pages: server-rendered, every value escaped, styled by /styles.css
 * and free of scripts (the Content-Security-Policy allows none).
 */
export type DemoPaths = {
  loginPath: string;
  logoutPath: string;
  signedInPath: string;
  /** POST: "Sign out everywhere else". */
  signOutOthersPath: string;
};

/** The user's sessions on /me: undefined `list` when the gateway could not list them now. */
export type SessionsView = {
  list: readonly AccountSession[] | undefined;
  /** How many sessions "Sign out everywhere else" just ended, when it did. */
  ended: number | undefined;
};

export function layout(title: string, body: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Demo platform</title>
        <link rel="stylesheet" href="/styles.css" />
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
      </head>
      <body>
        <header><a class="brand" href="/">Demo platform</a></header>
        <main>${body}</main>
        <footer>A platform built only on <code>@gateway/platform-sdk</code>.</footer>
      </body>
    </html> `.markup;
}

/** Where the sign-in and sign-up links go: the SDK's login path, back to the signed-in page. */
export function loginHref(paths: DemoPaths, screen: 'in' | 'up'): string {
  const query = new URLSearchParams({ returnTo: paths.signedInPath });
  if (screen === 'up') query.set('screen', 'up');
  return `${paths.loginPath}?${query.toString()}`;
}

export function homePage(paths: DemoPaths): string {
  return layout(
    'Welcome',
    html` <h1>Welcome to the demo platform</h1>
      <p>
        This platform never sees a password or an identity token: the central authentication gateway
        signs you in and hands the result over to this platform's backend.
      </p>
      <p class="actions">
        <a class="button primary" href="${loginHref(paths, 'in')}">Sign in</a>
        <a class="button" href="${loginHref(paths, 'up')}">Create an account</a>
      </p>
      <p class="muted">Already signed in? <a href="${paths.signedInPath}">Open your page</a>.</p>`,
  );
}

export function signedInPage(
  paths: DemoPaths,
  signedIn: { result: ExchangeResult; session: IntrospectedSession },
  sessions: SessionsView,
): string {
  const { result, session } = signedIn;
  const email = introspectedEmail(session);
  const { onboarding, profile } = result;
  return layout(
    'Signed in',
    html` <h1>You are signed in${email === undefined ? '' : html` as ${email}`}</h1>
      <p class="muted">
        What the gateway's exchange (<code>POST /v1/auth/exchange</code>) told this platform.
      </p>
      <section>
        <h2>User</h2>
        <dl>
          ${row('id', result.user.id)} ${row('sub', result.user.sub)}
          ${row('issuer', result.user.issuer)} ${email === undefined ? '' : row('e-mail', email)}
          ${result.user.picture === undefined ? '' : row('picture', result.user.picture)}
        </dl>
      </section>
      <section>
        <h2>Environment</h2>
        <dl>
          ${row('key', result.environment.key)} ${row('tier', result.environment.tier)}
          ${row('platform', result.platform.key)}
        </dl>
      </section>
      <section>
        <h2>Onboarding</h2>
        <dl>
          ${row('status', html`<span class="status">${onboarding.status}</span>`)}
          ${row('missing fields', list(onboarding.missingFields))}
          ${row('requirement version', onboarding.requirementVersion)}
          ${row('can complete centrally', onboarding.canCompleteCentrally ? 'yes' : 'no')}
          ${row('profile status', html`<span class="status">${profile.status}</span>`)}
          ${row('profile missing fields', list(profile.missingFields))}
        </dl>
      </section>
      <section>
        <h2>Permissions</h2>
        <p>${list(result.permissions)}</p>
      </section>
      <section>
        <h2>Session</h2>
        <dl>${row('expires at', result.session.expiresAt)}</dl>
      </section>
      ${sessionsSection(paths, sessions)}
      <form method="post" action="${paths.logoutPath}">
        <button class="button" type="submit">Sign out</button>
      </form>`,
  );
}

/**
 * Where the user is signed in through the gateway, on every platform, and the form that
 * ends all of it but this session.
 */
function sessionsSection(paths: DemoPaths, { list, ended }: SessionsView): SafeHtml {
  const others = list?.filter((session) => !session.current).length;
  const signOutOthers =
    others === 0
      ? html`<p class="muted">You are not signed in anywhere else.</p>`
      : html`<form method="post" action="${paths.signOutOthersPath}">
          <button class="button" type="submit">Sign out everywhere else</button>
        </form>`;
  return html` <section aria-labelledby="sessions-title">
    <h2 id="sessions-title">Your sessions</h2>
    <p class="muted">
      Everywhere you are signed in through the gateway (<code>GET /v1/account/sessions</code>),
      newest first.
    </p>
    ${endedNotice(ended)}
    ${
      list === undefined
        ? html`<p class="notice">Your sessions cannot be listed right now.</p>`
        : sessionsTable(list)
    }
    ${signOutOthers}
  </section>`;
}

function endedNotice(ended: number | undefined): SafeHtml | string {
  if (ended === undefined) return '';
  const text =
    ended === 0
      ? 'There was no other session to sign out of.'
      : `Signed out of ${ended} other session${ended === 1 ? '' : 's'}.`;
  return html`<p class="notice" role="status">${text}</p>`;
}

function sessionsTable(list: readonly AccountSession[]): SafeHtml {
  return html`<table>
    <thead>
      <tr>
        <th scope="col">Platform</th>
        <th scope="col">Environment</th>
        <th scope="col">Signed in</th>
        <th scope="col">Expires</th>
        <th scope="col"><span class="visually-hidden">This session</span></th>
      </tr>
    </thead>
    <tbody>
      ${list.map(sessionRow)}
    </tbody>
  </table>`;
}

function sessionRow(session: AccountSession): SafeHtml {
  const platform =
    session.platform === null ? html`<span class="muted">none</span>` : session.platform.name;
  return html`<tr${session.current ? html` class="current"` : ''}>
    <td>${platform}</td>
    <td>${session.environment.key} (${session.environment.tier})</td>
    <td>${timeOf(session.createdAt)}</td>
    <td>${timeOf(session.expiresAt)}</td>
    <td>${session.current ? html`<strong>this session</strong>` : ''}</td>
  </tr>`;
}

/** A timestamp as `2030-01-01 09:30:00 UTC` (the page has no script to show local time). */
function timeOf(iso: string): SafeHtml {
  const text = `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return html`<time datetime="${iso}">${text}</time>`;
}

export function errorPage(status: number, message: string): string {
  return layout(
    status === 404 ? 'Not found' : 'Something went wrong',
    html` <h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1>
      <p>${message}</p>
      <p><a href="/">Back to the home page</a></p>`,
  );
}

/** The tab icon: a key on the brand colour. */
export const favicon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="7" fill="#0969da"/>' +
  '<circle cx="12" cy="16" r="5" fill="none" stroke="#fff" stroke-width="3"/>' +
  '<path d="M17 16h10M23 16v5M27 16v4" stroke="#fff" stroke-width="3"/></svg>';

export const stylesheet = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; }
body { margin: 0 auto; max-width: 46rem; padding: 1rem 1.5rem; line-height: 1.5; }
header { padding: 0.5rem 0 1rem; border-bottom: 1px solid #8884; }
.brand { font-weight: 700; text-decoration: none; color: inherit; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.1rem; margin-bottom: 0.25rem; }
section { margin: 1.25rem 0; }
dl { display: grid; grid-template-columns: 12rem 1fr; gap: 0.25rem 1rem; margin: 0; }
dt { color: #777; }
dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1rem; }
th, td { text-align: left; padding: 0.3rem 0.6rem 0.3rem 0; border-bottom: 1px solid #8884; }
th { color: #777; font-weight: 400; }
tr.current td { font-weight: 600; }
.notice { padding: 0.5rem 0.75rem; border-left: 3px solid #4a6cf7; background: #4a6cf71a; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip-path: inset(50%); white-space: nowrap; }
.actions { display: flex; gap: 0.75rem; margin: 1.5rem 0; }
.button { display: inline-block; padding: 0.5rem 1.1rem; border: 1px solid #4a6cf7;
  border-radius: 0.4rem; color: #4a6cf7; background: transparent; font: inherit;
  text-decoration: none; cursor: pointer; }
.button.primary { background: #4a6cf7; color: #fff; }
.status { font-weight: 600; }
.muted, footer { color: #777; }
footer { margin-top: 2.5rem; font-size: 0.85rem; }
`;

function row(label: string, value: HtmlValue): SafeHtml {
  return html`<dt>${label}</dt>
    <dd>${value}</dd>`;
}

function list(values: readonly string[]): SafeHtml {
  if (values.length === 0) return html`<span class="muted">none</span>`;
  return html`${values.map((value, index) => html`${index === 0 ? '' : ', '}<code>${value}</code>`)}`;
}

/** The introspection carries the e-mail address; the exchange body does not (spec 4.4, 4.5). */
function introspectedEmail(session: IntrospectedSession): string | undefined {
  const { email } = session.user;
  return email === null || email === '' ? undefined : email;
}
