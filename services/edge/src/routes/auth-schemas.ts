import { z } from 'zod';
import { PLATFORM_KEY_PATTERN } from './registry-schemas.js';

// Request and response schemas of the login flow (spec 4.1-4.7). The same schemas validate
// requests and describe them in /openapi.json. Queries and bodies are strict (an unknown
// parameter or property is 400 VALIDATION_ERROR before any service call), with one
// exception: the identity callback, whose query the identity provider writes.

const ONBOARDING_MODES = ['none', 'platform', 'central'] as const;
const timestamp = z.iso.datetime({ offset: true });
/** Spec 4.1, 8: `returnTo` is 1 to 2048 characters; its rules are the service's (4.1.1). */
const returnTo = z.string().min(1).max(2048);

// ---- Queries ----

export const StartQuery = z
  .object({
    platformKey: z.string().regex(PLATFORM_KEY_PATTERN),
    returnTo: returnTo.describe(
      'Absolute http(s) URL or root-relative path under a registered return URL.',
    ),
    onboardingMode: z
      .enum(ONBOARDING_MODES)
      .optional()
      .describe("An assertion only: must equal the platform's defaultOnboardingMode."),
    defaultScreen: z
      .enum(['in', 'up'])
      .default('in')
      .describe('`up` opens the registration screen (`screen_hint=signup`).'),
  })
  .strict();

/**
 * Spec 4.2. The identity provider writes this query, and providers add parameters of their
 * own (`iss` of RFC 9207, `session_state` of OIDC session management, ...). So unknown
 * parameters are tolerated here, and only here: refusing them would strand the user on an
 * error page after a successful sign-in. The parameters the gateway reads are still checked.
 */
export const CallbackQuery = z
  .object({
    code: z.string().min(1).max(4096).optional(),
    state: z.string().min(1).max(1024).optional(),
    error: z
      .string()
      .max(256)
      .optional()
      .describe('Sent by the identity provider instead of `code` (e.g. the user cancelled).'),
    error_description: z.string().max(4096).optional(),
    error_uri: z.string().max(4096).optional(),
    iss: z.string().max(2048).optional(),
    session_state: z.string().max(1024).optional(),
  })
  .loose();

export const ResumeQuery = z.object({ transaction: z.uuid() }).strict();

export const LogoutQuery = z
  .object({ returnTo: returnTo.optional().describe('Used when the body has no `returnTo`.') })
  .strict();

export const LoggedOutQuery = z
  .object({
    state: z
      .string()
      .max(4096)
      .optional()
      .describe('The destination, encrypted at logout. Missing or invalid: the fallback URL.'),
  })
  .strict();

// ---- Bodies ----

export const ExchangeBody = z
  .object({
    code: z
      .string()
      .startsWith('handoff_')
      .max(200)
      .describe('The handoff code from the platform callback.'),
  })
  .strict()
  .meta({ id: 'ExchangeRequest' });

export const IntrospectBody = z
  .object({ token: z.string().min(1).max(512).describe('A gatewayToken.') })
  .strict()
  .meta({ id: 'IntrospectionRequest' });

/** Spec 4.6: the body may be absent, empty or `{}`. */
export const LogoutBody = z
  .object({ returnTo: returnTo.optional().describe('Wins over the query parameter.') })
  .strict()
  .meta({ id: 'LogoutRequest' })
  .optional();

// ---- Responses ----

const EnvironmentJson = z.object({
  key: z.string(),
  tier: z.enum(['development', 'staging', 'production']),
});

export const ExchangeResultJson = z
  .object({
    session: z.object({
      id: z.uuid(),
      expiresAt: timestamp,
      gatewayToken: z
        .string()
        .describe('Keep server-side; send as `Cookie: svc_auth_session=<gatewayToken>`.'),
    }),
    user: z.object({
      id: z.uuid(),
      sub: z.string().describe('Unique only together with `issuer`.'),
      issuer: z.string(),
      picture: z.string().optional().describe('Present only when known.'),
    }),
    platform: z.object({ key: z.string() }),
    environment: EnvironmentJson.describe('The environment the user signed in through.'),
    onboarding: z.object({
      status: z.enum(['NOT_STARTED', 'IN_PROGRESS', 'COMPLETE']),
      requirementVersion: z.number().int(),
      missingFields: z.array(z.string()),
      canCompleteCentrally: z.boolean(),
    }),
    profile: z.object({
      status: z.string().describe('Always `COMPLETE` in a handoff.'),
      missingFields: z.array(z.string()),
    }),
    permissions: z.array(z.string()).describe('Empty outside the deployment environment.'),
    returnTo: z.string().describe('The server-validated absolute URL captured at start.'),
  })
  .meta({ id: 'ExchangeResult' });

export const IntrospectionResultJson = z
  .union([
    z.object({ active: z.literal(false) }),
    z.object({
      active: z.literal(true),
      sessionId: z.uuid(),
      expiresAt: timestamp,
      platformKey: z.string(),
      user: z.object({
        id: z.uuid(),
        issuer: z.string(),
        subject: z.string(),
        email: z.string().nullable().describe('`null` when the identity has no e-mail address.'),
        emailVerified: z.boolean(),
        status: z.string(),
      }),
      environment: EnvironmentJson,
    }),
  ])
  .meta({
    id: 'IntrospectionResult',
    description:
      'Cache only `active: true`, keyed by a hash of the token, for at most 30 to 60 s and ' +
      'never beyond `expiresAt`.',
  });

export const LogoutResultJson = z
  .object({
    logoutUrl: z
      .string()
      .nullable()
      .describe(
        'Send the browser here to end the identity session; `null` when there is nothing ' +
          'to end (no cookie, an invalid session, or no end-session endpoint).',
      ),
  })
  .meta({ id: 'LogoutResult' });

// ---- Back-Channel Logout 1.0 (an addition to the spec) ----

/**
 * Section 2.5: the identity provider posts the logout token as a form field. Other fields are
 * tolerated (a provider may add its own), as on the callback; a repeated `logout_token` is
 * refused.
 */
export const BackchannelLogoutBody = z
  .object({
    logout_token: z
      .string()
      .min(1)
      .max(8192)
      .describe('The logout token: a JWT signed by the identity environment (section 2.4).'),
  })
  .loose();
