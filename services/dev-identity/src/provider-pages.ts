import { html, SafeHtml } from './html.js';
import { renderPage } from './page-layout.js';

/**
 * The sign-out confirmation of rpInitiatedLogout. `providerForm` is oidc-provider's own form
 * (`op.logoutForm`, carrying its xsrf token); the button and the `logout=yes` field join it
 * through the `form` attribute, so the whole identity session ends.
 *
 * With a valid `id_token_hint` the client that started the sign-out holds the user's ID
 * token, so the page submits itself (the gateway's logout needs no second click); the button
 * remains for browsers without scripts.
 */
export function renderLogoutPage(model: {
  environmentLabel: string;
  providerForm: string;
  signedInAs: string | undefined;
  autoSubmit: boolean;
}): string {
  return renderPage(
    { title: 'Sign out', subtitle: model.environmentLabel, autoSubmitLogout: model.autoSubmit },
    html`${
        model.signedInAs === undefined
          ? html`<p>Do you want to sign out?</p>`
          : html`<p>
              You are signed in as <strong>${model.signedInAs}</strong>. Do you want to sign out?
            </p>`
      }
      ${new SafeHtml(model.providerForm)}
      <input type="hidden" form="op.logoutForm" name="logout" value="yes" />
      <button type="submit" form="op.logoutForm">Sign out</button>`,
  );
}

/** Where the browser lands after signing out without a post_logout_redirect_uri. */
export function renderSignedOutPage(environmentLabel: string): string {
  return renderPage(
    { title: 'Signed out', subtitle: environmentLabel },
    html`<p class="notice">You are signed out. You can close this window.</p>`,
  );
}

export function renderErrorPage(model: {
  environmentLabel?: string;
  error: string;
  description?: string | undefined;
}): string {
  return renderPage(
    { title: 'Something went wrong', subtitle: model.environmentLabel },
    html`<p class="error" role="alert">
        <strong>${model.error}</strong>${
          model.description === undefined ? '' : html`: ${model.description}`
        }
      </p>
      <p>Go back to the application and try again.</p>`,
  );
}
