import { defineOperation, type AnyOperation } from '../http/operation.js';
import { BackchannelLogoutBody } from './auth-schemas.js';
import { LOGIN_FLOW_TAGS } from './login-operations.js';
import { oauthErrorResponses } from './openapi-responses.js';
import { EnvironmentKeyParams } from './registry-schemas.js';

// OpenID Connect Back-Channel Logout 1.0, received by the gateway: an addition to the spec,
// which changes none of its answers. One endpoint per identity environment (its key in the
// path selects the issuer and keys the token must match); the identity provider calls it,
// server to server, when a user's identity session ends.

/** Where an identity environment sends its logout tokens, below `{base_url}`. */
export function backchannelLogoutPath(environmentKey: string): string {
  return `/v1/auth/backchannel-logout/${encodeURIComponent(environmentKey)}`;
}

const handleBackchannelLogout = defineOperation({
  auth: { kind: 'public' },
  response: { kind: 'empty' },
  errorBody: 'oauth',
  operationId: 'handleBackchannelLogout',
  method: 'post',
  path: '/v1/auth/backchannel-logout/:environmentKey',
  summary: 'Single logout: the identity provider ends gateway sessions (identity provider only).',
  description:
    'OpenID Connect Back-Channel Logout 1.0. The logout token is the credential: signed with ' +
    "the environment's keys (EdDSA, RS256, ES256), `iss` the environment's issuer, `aud` the " +
    "gateway's client, `iat` at most 5 minutes old, `exp` (if any) not passed, the " +
    'back-channel logout event, `sid` and/or `sub`, no `nonce`, and a `jti` not seen before. ' +
    "It ends every live gateway session of the environment signed in with the token's `sid` " +
    "(only the `sub`'s, when both are given), or with `sub` alone every live session of that " +
    "user in the environment; a platform's next introspection answers `active: false`. A " +
    'token that names no live session is accepted all the same. Errors are OAuth 2.0 error ' +
    'bodies. Every answer carries `Cache-Control: no-store`.',
  tags: LOGIN_FLOW_TAGS,
  params: EnvironmentKeyParams,
  body: BackchannelLogoutBody,
  bodyEncoding: 'form',
  responses: {
    200: { description: 'The token is accepted; the sessions it names are ended (no body).' },
    ...oauthErrorResponses({
      400: 'The logout token fails a check, was used before, or the body has no single `logout_token`; or no active identity environment has this key (`invalid_request`).',
      413: 'The body is larger than 64 KiB (`invalid_request`).',
      415: 'The body is not `application/x-www-form-urlencoded` (`invalid_request`).',
      502: "The environment's discovery document has no `jwks_uri` (`temporarily_unavailable`).",
      503: "The environment's keys cannot be fetched, or a gateway service is unavailable (`temporarily_unavailable`).",
    }),
  },
  handler: async ({ params, body, services }) => {
    await services.clients.authFlow.backchannelLogout({
      environmentKey: params.environmentKey,
      logoutToken: body.logout_token,
    });
  },
});

/** Back-Channel Logout 1.0, received. */
export const backchannelLogoutOperations: readonly AnyOperation[] = [handleBackchannelLogout];
