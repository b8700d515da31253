import type { ApiProblem } from './client.js';

// What an admin should know about an error beyond the gateway's message: why it happens
// and what to do. Codes of spec 7; a code without an entry shows the message alone.
const explanations: Readonly<Record<string, string>> = {
  UNAUTHORIZED: 'Your session has ended. Sign in again.',
  VALIDATION_ERROR: 'The gateway refused the values named below; correct them and try again.',
  CONFLICT:
    'It conflicts with what the gateway holds now. If someone else changed it, reload the page.',
  FORBIDDEN:
    'Your session may not do this: it needs the platform_admin role, signed in through the console.',
  LAST_PLATFORM_ADMIN:
    'This is the last platform admin. Grant the role to another deployment-environment user first, so the gateway always keeps an admin.',
  ROLE_REQUIRES_DEPLOYMENT_ENVIRONMENT:
    'Only users of the deployment environment (PROD) can hold platform_admin; users of other identity environments never carry gateway permissions.',
  PLATFORM_ARCHIVED: 'An archived platform must be restored before it can be activated.',
  IDENTITY_ENVIRONMENT_NOT_FOUND: 'No identity environment has this key.',
  IDENTITY_ENVIRONMENT_INACTIVE: 'The identity environment is inactive: activate it first.',
  IDENTITY_ENVIRONMENT_SECRET_KEY_MISSING:
    'The gateway has no IDENTITY_ENVIRONMENT_SECRET_KEY, so it cannot store a client secret.',
  IDENTITY_UNAVAILABLE: 'The identity service did not answer. Try again in a moment.',
  IDENTITY_SERVICE_NOT_CONFIGURED:
    'The gateway has no IDENTITY_SERVICE_URL or IDENTITY_SERVICE_KEY, so identity sessions cannot be revoked.',
  RATE_LIMITED: 'Too many requests. Wait a moment and try again.',
  SERVICE_UNAVAILABLE: 'A gateway service is unavailable. Try again in a moment.',
  NOT_FOUND: 'It no longer exists, or was never there. Reload the page.',
};

/**
 * The lines an error alert shows: the gateway's message, the explanation, each field detail
 * (`details.issues`, also shown beside its field where the form has one), then the code.
 */
export function explainProblem(problem: ApiProblem): string[] {
  const lines = [problem.message];
  const extra = explanations[problem.code];
  if (extra !== undefined && extra !== problem.message) lines.push(extra);
  for (const [path, message] of Object.entries(problem.fieldErrors())) {
    const line = path === '' ? message : `${path}: ${message}`;
    if (line !== problem.message) lines.push(line);
  }
  const revoked = problem.details?.revokedGatewaySessions;
  if (typeof revoked === 'number') {
    lines.push(`${revoked} gateway session(s) were revoked before the failure.`);
  }
  if (problem.status > 0) lines.push(`Error code ${problem.code} (HTTP ${problem.status}).`);
  return lines;
}
