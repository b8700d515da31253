import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccountDirectory } from './account-directory.js';
import type { EnvironmentProvider } from './environment-provider.js';
import { sendEmpty, sendJson } from './http-io.js';
import { serviceTokenProblem, type ServiceAction } from './service-token.js';

/**
 * The internal users API the gateway calls (spec 4.15), cluster-internal only:
 *
 * - `POST /internal/v1/environments/{key}/users/{sub}/suspend`: the account can no longer
 *   sign in, and its sessions, grants, codes and refresh tokens are destroyed.
 * - `POST /internal/v1/environments/{key}/users/{sub}/sessions/revoke`: the sessions, grants,
 *   codes and refresh tokens are destroyed; the account stays active.
 *
 * Both answer 204 (also when repeated), 401 `UNAUTHORIZED` for a refused service token, 404
 * `IDENTITY_USER_NOT_FOUND` for a subject the environment does not have, and 503
 * `IDENTITY_SERVICE_NOT_CONFIGURED` when the service has no IDENTITY_SERVICE_KEY. JWT access
 * tokens already issued are not stored anywhere; they expire within 10 minutes.
 */
export type InternalUsersApi = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => Promise<void>;

export const internalApiPrefix = '/internal/v1';

const userActionRoute =
  /^\/internal\/v1\/environments\/([^/]+)\/users\/([^/]+)\/(suspend|sessions\/revoke)$/;
const actions: Record<string, ServiceAction> = {
  suspend: 'users.suspend',
  'sessions/revoke': 'users.sessions.revoke',
};

export function createInternalUsersApi(options: {
  environments: ReadonlyMap<string, EnvironmentProvider>;
  directory: AccountDirectory;
  serviceKey: string | undefined;
}): InternalUsersApi {
  const { environments, directory } = options;
  const serviceKey =
    options.serviceKey === undefined ? undefined : new TextEncoder().encode(options.serviceKey);

  return async function handleInternalUsersApi(req, res, url) {
    req.resume(); // the body is not read
    const match = userActionRoute.exec(url.pathname);
    const action = actions[match?.[3] ?? ''];
    const environmentKey = decodePathSegment(match?.[1]);
    const subject = decodePathSegment(match?.[2]);
    if (action === undefined || environmentKey === undefined || subject === undefined) {
      sendJson(res, 404, { code: 'NOT_FOUND', message: 'No such internal API route.' });
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      sendJson(res, 405, { code: 'METHOD_NOT_ALLOWED', message: 'Use POST.' });
      return;
    }
    if (serviceKey === undefined) {
      sendJson(res, 503, {
        code: 'IDENTITY_SERVICE_NOT_CONFIGURED',
        message: 'The internal users API is off: IDENTITY_SERVICE_KEY is not configured.',
      });
      return;
    }
    const problem = await serviceTokenProblem(req.headers.authorization, serviceKey, {
      environmentKey,
      action,
    });
    if (problem !== undefined) {
      res.setHeader('www-authenticate', 'Bearer');
      sendJson(res, 401, { code: 'UNAUTHORIZED', message: `Service token refused: ${problem}.` });
      return;
    }
    const environment = environments.get(environmentKey);
    if (environment === undefined || !directory.exists(environmentKey, subject)) {
      sendJson(res, 404, {
        code: 'IDENTITY_USER_NOT_FOUND',
        message: `Environment ${environmentKey} has no user ${subject}.`,
      });
      return;
    }
    try {
      if (action === 'users.suspend') await directory.suspend(environmentKey, subject);
      environment.store.revokeAccount(subject);
    } catch (error) {
      console.error('dev-identity: internal users API failed', error);
      sendJson(res, 500, { code: 'INTERNAL_ERROR', message: 'The identity service failed.' });
      return;
    }
    sendEmpty(res, 204);
  };
}

function decodePathSegment(segment: string | undefined): string | undefined {
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined; // malformed percent-encoding
  }
}
