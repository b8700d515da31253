import type { VerifiedAccessToken } from '@gateway/oidc';

/** The gateway permissions (spec 2.6). */
export const PERMISSIONS = [
  'platforms:admin',
  'onboarding:schema:read',
  'onboarding:schema:write',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

/** Who is calling, as established by Bearer authentication (spec 5). */
export type Principal = {
  kind: 'machine' | 'user';
  /** The token's issuer, exactly as registered for its identity environment. */
  issuer: string;
  environmentKey: string;
  /** The issuer is the deployment (PROD) environment: the only one that grants permissions. */
  deployment: boolean;
  subject?: string;
  clientId?: string;
  email?: string;
  permissions: Permission[];
  /** Set when a machine token carries `svc_platform` / `platform_key`: one platform only. */
  platformKey?: string;
};

function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/**
 * The permissions of a user token. Spec 2.6 and 5: they come only from local roles
 * (`platform_admin`), and only for users of the deployment environment; the auth-flow
 * service provisions the user and answers them (`roleGranted`). Anything that is not a
 * gateway permission is dropped.
 */
export function permissionsOfUser(roleGranted: readonly string[]): Permission[] {
  return [...new Set(roleGranted.filter(isPermission))];
}

/**
 * Spec 5 rule 4: a machine token's permissions are the permission names among its scopes,
 * and only when its issuer is the deployment environment; other environments' machine
 * tokens authenticate but carry none.
 *
 * A machine token limited to one platform (`svc_platform` / `platform_key`) may only work on
 * that platform's onboarding schema (spec 4.13). `platforms:admin` is the registry-wide
 * permission, so it is dropped from such a token even when its scope names it: the registry
 * admin routes refuse it (403), and 4.13's "unless they hold platforms:admin" never lets a
 * limited token escape its platform.
 */
function permissionsOfMachine(token: VerifiedAccessToken): Permission[] {
  if (!token.deployment) return [];
  const granted = [...new Set(token.scopes.filter(isPermission))];
  return token.platformKey === undefined
    ? granted
    : granted.filter((permission) => permission !== 'platforms:admin');
}

/** The Principal of a verified access token. */
export function principalOf(token: VerifiedAccessToken): Principal {
  return {
    kind: token.kind,
    issuer: token.issuer,
    environmentKey: token.environmentKey,
    deployment: token.deployment,
    ...(token.subject === undefined ? {} : { subject: token.subject }),
    ...(token.clientId === undefined ? {} : { clientId: token.clientId }),
    ...(token.email === undefined ? {} : { email: token.email }),
    // A user's permissions come from its roles; the caller adds them (permissionsOfUser).
    permissions: token.kind === 'machine' ? permissionsOfMachine(token) : [],
    ...(token.platformKey === undefined ? {} : { platformKey: token.platformKey }),
  };
}
