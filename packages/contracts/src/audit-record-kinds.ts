// Hand-written, unlike ./gen: the kinds of audit record the gateway keeps. The registry
// records them, the edge accepts them as the `kind` filter of GET /v1/audit-records (and so
// lists them in /openapi.json, which the admin console's kind filter is generated from).

/** Every kind of audit record (docs/operations.md, Security events, for the login ones). */
export const AUDIT_RECORD_KINDS = [
  'user_role.bootstrapped',
  'user_role.granted',
  'user_role.revoked',
  'identity_environment.created',
  'identity_environment.updated',
  'identity_environment.deactivated',
  'identity_environment.activated',
  'platform.created',
  'platform.updated',
  'platform.environment_changed',
  'platform.deactivated',
  'platform.activated',
  'platform.archived',
  'platform.restored',
  'platform.credential_created',
  'platform.credential_rotated',
  'platform.credential_previous_secret_revoked',
  'platform.credential_revoked',
  'platform.authentication_failed',
  'auth.sign_in_succeeded',
  'auth.sign_in_refused',
  'auth.logout',
  'auth.backchannel_logout',
  'session.revoked',
  'user_session.revoked',
  'admin.cookie_used',
] as const;

/** One kind of audit record. */
export type AuditKind = (typeof AUDIT_RECORD_KINDS)[number];
