import { html, type SafeHtml } from './html.js';
import { renderPage } from './page-layout.js';
import { minimumPasswordLength } from './passwords.js';

export type SignInPageModel = {
  /** Shown under the title: which environment the account belongs to. */
  environmentLabel: string;
  /** The interaction's URL path; the forms post below it. */
  interactionPath: string;
  error?: string;
  /** Values to show again after an error (never the password). */
  email?: string;
  name?: string;
};

export function renderLoginPage(model: SignInPageModel): string {
  return renderPage(
    { title: 'Sign in', subtitle: model.environmentLabel },
    html`${errorMessage(model.error)}
      <form method="post" action="${model.interactionPath}/login">
        <label for="email">E-mail address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          autofocus
          value="${model.email ?? ''}"
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
        />
        <button type="submit">Sign in</button>
      </form>
      ${cancelForm(model.interactionPath)}
      <p class="switch">
        No account yet? <a href="${model.interactionPath}?screen=signup">Create an account</a>
      </p>`,
  );
}

export function renderRegistrationPage(model: SignInPageModel): string {
  return renderPage(
    { title: 'Create an account', subtitle: model.environmentLabel },
    html`${errorMessage(model.error)}
      <form method="post" action="${model.interactionPath}/register">
        <label for="email">E-mail address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          autofocus
          value="${model.email ?? ''}"
        />
        <label for="name">Name</label>
        <input
          id="name"
          name="name"
          type="text"
          autocomplete="name"
          maxlength="200"
          value="${model.name ?? ''}"
        />
        <label for="password">Password (at least ${minimumPasswordLength} characters)</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          minlength="${minimumPasswordLength}"
          required
        />
        <label for="passwordConfirmation">Password, again</label>
        <input
          id="passwordConfirmation"
          name="passwordConfirmation"
          type="password"
          autocomplete="new-password"
          minlength="${minimumPasswordLength}"
          required
        />
        <button type="submit">Create account</button>
      </form>
      ${cancelForm(model.interactionPath)}
      <p class="switch">
        Already have an account? <a href="${model.interactionPath}?screen=login">Sign in</a>
      </p>`,
  );
}

function cancelForm(interactionPath: string): SafeHtml {
  return html`<form method="post" action="${interactionPath}/abort">
    <button class="secondary" type="submit">Cancel and go back</button>
  </form>`;
}

export function errorMessage(error: string | undefined): SafeHtml {
  return error === undefined ? html`` : html`<p class="error" role="alert">${error}</p>`;
}
