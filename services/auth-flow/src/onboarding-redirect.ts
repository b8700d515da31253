/**
 * Spec 4.2 step 8: the identity UI's onboarding page,
 * `{identity_host}/env/{key}/onboarding?platform=<platformKey>&resume=<transactionId>[&scope=global]`.
 * `{key}` is the issuer's path key when the issuer is `<host>/api/auth/env/{key}`,
 * otherwise `default`.
 */
export function onboardingPageUrl(
  issuer: string,
  request: { platformKey: string; transactionId: string; scope: 'global' | 'platform' },
): string {
  const issuerUrl = new URL(issuer);
  const key = /^\/api\/auth\/env\/([^/]+)\/?$/.exec(issuerUrl.pathname)?.[1] ?? 'default';
  const url = new URL(`/env/${key}/onboarding`, issuerUrl.origin);
  url.searchParams.set('platform', request.platformKey);
  url.searchParams.set('resume', request.transactionId);
  if (request.scope === 'global') url.searchParams.set('scope', 'global');
  return url.href;
}
