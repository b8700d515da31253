import { html, type SafeHtml } from './html.js';
import { describedBy, fieldNotes, renderPage } from './page-layout.js';
import { minimumPasswordLength, passwordRule } from './passwords.js';

/** The fields of the registration form. */
export type RegistrationField = 'email' | 'name' | 'password' | 'passwordConfirmation';

export type SignInPageModel = {
  /** Shown under the title: which environment the account belongs to. */
  environmentLabel: string;
  /** The interaction's URL path; the forms post below it. */
  interactionPath: string;
  /** What went wrong with the form as a whole, shown above it. */
  error?: string;
  /** What the server refused in one field, shown beside that field. */
  fieldErrors?: Partial<Record<RegistrationField, string | SafeHtml>>;
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
  const errors = model.fieldErrors ?? {};
  const email = { error: errors.email };
  const name = { error: errors.name };
  const password = { hint: passwordRule, error: errors.password };
  const confirmation = { error: errors.passwordConfirmation };
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
          ${describedBy('email', email)}
        />
        ${fieldNotes('email', email)}
        <label for="name">Name</label>
        <input
          id="name"
          name="name"
          type="text"
          autocomplete="name"
          maxlength="200"
          value="${model.name ?? ''}"
          ${describedBy('name', name)}
        />
        ${fieldNotes('name', name)}
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          minlength="${minimumPasswordLength}"
          required
          ${describedBy('password', password)}
        />
        ${fieldNotes('password', password)}
        <label for="passwordConfirmation">Password, again</label>
        <input
          id="passwordConfirmation"
          name="passwordConfirmation"
          type="password"
          autocomplete="new-password"
          minlength="${minimumPasswordLength}"
          required
          ${describedBy('passwordConfirmation', confirmation)}
        />
        ${fieldNotes('passwordConfirmation', confirmation)}
        <button type="submit">Create account</button>
      </form>
      ${cancelForm(model.interactionPath)}
      <p class="switch">
        Already have an account? <a href="${signInPath(model.interactionPath)}">Sign in</a>
      </p>`,
  );
}

/** The sign-in page of the same interaction, with the e-mail address filled in when given. */
export function signInPath(interactionPath: string, email?: string): string {
  const query = new URLSearchParams({ screen: 'login' });
  if (email !== undefined && email !== '') query.set('email', email);
  return `${interactionPath}?${query.toString()}`;
}

function cancelForm(interactionPath: string): SafeHtml {
  return html`<form method="post" action="${interactionPath}/abort">
    <button class="secondary" type="submit">Cancel and go back</button>
  </form>`;
}

export function errorMessage(error: string | undefined): SafeHtml {
  return error === undefined ? html`` : html`<p class="error" role="alert">${error}</p>`;
}
