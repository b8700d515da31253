import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccountDirectory } from './account-directory.js';
import type { EnvironmentProvider } from './environment-provider.js';
import { readForm, redirectSeeOther, sendPage } from './http-io.js';
import type { Provider } from './oidc-provider-loader.js';
import { html, type SafeHtml } from './html.js';
import { renderErrorPage } from './provider-pages.js';
import { newPasswordProblem } from './passwords.js';
import {
  renderLoginPage,
  renderRegistrationPage,
  signInPath,
  type RegistrationField,
  type SignInPageModel,
} from './sign-in-pages.js';

/**
 * The pages oidc-provider sends the browser to during an authorization request, at
 * `<mountPath>/interaction/<uid>`:
 *
 * - GET: the sign-in page, or the registration page when the request carried
 *   `screen_hint=signup` (`?screen=signup|login` switches between them); consent is granted
 *   at once, since every client of an environment is first-party.
 * - POST `/login`, `/register`, `/abort`: the forms.
 *
 * CSRF: a form only acts on the interaction whose id is in its URL and in the interaction
 * cookie (path-scoped, HttpOnly, SameSite=Lax) of this browser, oidc-provider's standard
 * binding; a cross-site post carries no cookie and a forged URL names no interaction.
 */
export type InteractionAction = 'show' | 'login' | 'register' | 'abort';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

export async function handleInteraction(
  environment: EnvironmentProvider,
  directory: AccountDirectory,
  request: { req: IncomingMessage; res: ServerResponse; url: URL },
  uid: string,
  action: InteractionAction,
): Promise<void> {
  const { req, res, url } = request;
  const { provider } = environment;
  const interaction = await currentInteraction(provider, req, res, uid);
  if (interaction === undefined) {
    sendPage(
      res,
      400,
      renderErrorPage({
        environmentLabel: environment.label,
        error: 'This sign-in is no longer valid',
        description: 'it expired, was completed, or was started in another browser',
      }),
    );
    return;
  }
  const model: SignInPageModel = {
    environmentLabel: environment.label,
    interactionPath: `${environment.mountPath}/interaction/${uid}`,
  };

  if (action === 'abort') {
    await provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'The user cancelled the sign-in.' },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (interaction.prompt.name === 'consent') {
    await grantFirstPartyConsent(provider, interaction, req, res);
    return;
  }
  if (action === 'show') {
    const screen =
      url.searchParams.get('screen') ??
      (interaction.params.screen_hint === 'signup' ? 'signup' : 'login');
    // "Sign in instead" after a refused registration brings its e-mail address along.
    const email = url.searchParams.get('email') ?? undefined;
    const shown = email === undefined ? model : { ...model, email };
    sendPage(
      res,
      200,
      screen === 'signup' ? renderRegistrationPage(shown) : renderLoginPage(shown),
    );
    return;
  }
  if (interaction.prompt.name !== 'login') {
    redirectSeeOther(res, model.interactionPath);
    return;
  }

  const form = await readForm(req);
  const accountId =
    action === 'login'
      ? await signIn(environment, directory, form, model, res)
      : await register(environment, directory, form, model, res);
  if (accountId === undefined) return; // the page with the error is sent
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId, amr: ['pwd'] } },
    { mergeWithLastSubmission: false },
  );
}

/** The interaction of this browser, when it is the one named in the URL. */
async function currentInteraction(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
): Promise<Interaction | undefined> {
  try {
    const interaction = await provider.interactionDetails(req, res);
    return interaction.uid === uid ? interaction : undefined;
  } catch (error) {
    if (error instanceof Error && error.name === 'SessionNotFound') return undefined;
    throw error;
  }
}

async function signIn(
  environment: EnvironmentProvider,
  directory: AccountDirectory,
  form: URLSearchParams,
  model: SignInPageModel,
  res: ServerResponse,
): Promise<string | undefined> {
  const email = (form.get('email') ?? '').trim();
  const password = form.get('password') ?? '';
  const refuse = (status: number, error: string) => {
    sendPage(res, status, renderLoginPage({ ...model, email, error }));
    return undefined;
  };
  if (email === '' || password === '') {
    return refuse(400, 'Enter your e-mail address and your password.');
  }
  const result = await directory.signIn(environment.environment.key, email, password);
  if (result.ok) return result.account.subject;
  if (result.reason === 'suspended') {
    return refuse(403, 'This account is suspended and cannot sign in. Contact an administrator.');
  }
  return refuse(401, 'The e-mail address or the password is not correct.');
}

async function register(
  environment: EnvironmentProvider,
  directory: AccountDirectory,
  form: URLSearchParams,
  model: SignInPageModel,
  res: ServerResponse,
): Promise<string | undefined> {
  const email = (form.get('email') ?? '').trim();
  const name = (form.get('name') ?? '').trim();
  const password = form.get('password') ?? '';
  const refuse = (status: number, field: RegistrationField, error: string | SafeHtml) => {
    const fieldErrors = { [field]: error };
    sendPage(res, status, renderRegistrationPage({ ...model, email, name, fieldErrors }));
    return undefined;
  };
  const problem = registrationProblem({
    email,
    name,
    password,
    confirmation: form.get('passwordConfirmation') ?? '',
  });
  if (problem !== undefined) return refuse(400, problem.field, problem.message);
  const account = await directory.register(environment.environment.key, {
    email,
    password,
    ...(name === '' ? {} : { name }),
  });
  if (account === undefined) {
    const signInInstead = signInPath(model.interactionPath, email);
    return refuse(
      409,
      'email',
      html`An account with this e-mail address already exists.
        <a href="${signInInstead}">Sign in instead</a>.`,
    );
  }
  return account.subject;
}

/** The first value of the registration form that is refused, and why. */
function registrationProblem(fields: {
  email: string;
  name: string;
  password: string;
  confirmation: string;
}): { field: RegistrationField; message: string } | undefined {
  if (fields.email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(fields.email)) {
    return { field: 'email', message: 'Enter a valid e-mail address.' };
  }
  if (fields.name.length > 200) {
    return { field: 'name', message: 'The name can have at most 200 characters.' };
  }
  const problem = newPasswordProblem(fields.password, fields.confirmation);
  if (problem === undefined) return undefined;
  const field = problem.field === 'password' ? 'password' : 'passwordConfirmation';
  return { field, message: problem.message };
}

/**
 * Grants what the consent prompt found missing (OIDC scopes, claims, the audience's scopes)
 * and finishes the interaction without a page: every client of an environment is registered
 * by its operator, that is first-party.
 */
async function grantFirstPartyConsent(
  provider: Provider,
  interaction: Interaction,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const accountId = interaction.session?.accountId;
  const clientId = interaction.params.client_id;
  if (accountId === undefined || typeof clientId !== 'string') {
    throw new Error('The consent prompt came without a signed-in account or a client');
  }
  const existing =
    interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId);
  const grant = existing ?? new provider.Grant({ accountId, clientId });
  const missing = interaction.prompt.details;
  const scopes = stringList(missing.missingOIDCScope);
  if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
  const claims = stringList(missing.missingOIDCClaims);
  if (claims.length > 0) grant.addOIDCClaims(claims);
  const resourceScopes = missing.missingResourceScopes;
  if (typeof resourceScopes === 'object' && resourceScopes !== null) {
    for (const [indicator, scope] of Object.entries(resourceScopes)) {
      grant.addResourceScope(indicator, stringList(scope).join(' '));
    }
  }
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { consent: { grantId } },
    { mergeWithLastSubmission: true },
  );
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item) => typeof item === 'string') : [];
}
