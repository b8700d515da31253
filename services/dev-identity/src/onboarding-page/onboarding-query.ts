// The query of the onboarding page (spec 4.2 step 8): the gateway redirects the browser to
// `{identity_host}/env/{key}/onboarding?platform=<platformKey>&resume=<transactionId>[&scope=global]`.

/** The gateway's platform key (spec 2.1). */
export const platformKeyPattern = /^[A-Z][A-Z0-9_]{1,63}$/;

/** `transactionId` is a UUID (spec 2.8). */
export const transactionIdPattern =
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `global` collects the global profile fields; `platform` the platform's own onboarding. */
export type OnboardingScope = 'global' | 'platform';

export type OnboardingRequest = {
  platformKey: string;
  /** The authentication transaction the page resumes (`GET /v1/auth/resume`, spec 4.3). */
  resume: string;
  scope: OnboardingScope;
};

export type OnboardingQueryCheck =
  { ok: true; request: OnboardingRequest } | { ok: false; problem: string };

/**
 * Reads and checks the page's query. Each parameter may appear once; `scope` is absent or
 * `global`. Other parameters are ignored. The problem text may quote the received value,
 * so it must be escaped wherever it is shown.
 */
export function readOnboardingQuery(query: URLSearchParams): OnboardingQueryCheck {
  const single = (name: string): string | undefined | null => {
    const values = query.getAll(name);
    if (values.length > 1) return null;
    return values[0];
  };
  const platformKey = single('platform');
  const resume = single('resume');
  const scope = single('scope');
  if (platformKey === null || resume === null || scope === null) {
    return { ok: false, problem: 'Each of platform, resume and scope may be given only once.' };
  }
  if (platformKey === undefined) return { ok: false, problem: 'The platform is missing.' };
  if (!platformKeyPattern.test(platformKey)) {
    return { ok: false, problem: `"${preview(platformKey)}" is not a platform key.` };
  }
  if (resume === undefined) return { ok: false, problem: 'The sign-in to resume is missing.' };
  if (!transactionIdPattern.test(resume)) {
    return { ok: false, problem: `"${preview(resume)}" is not a sign-in transaction id.` };
  }
  if (scope !== undefined && scope !== 'global') {
    return { ok: false, problem: `"${preview(scope)}" is not a scope; only "global" is.` };
  }
  return { ok: true, request: { platformKey, resume, scope: scope ?? 'platform' } };
}

/** At most 80 characters of a received value, for a message. */
function preview(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
