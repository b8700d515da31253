export { fetchDiscoveryDocument, type DiscoveryDocument } from './discovery-document.js';
export { authorizationErrorRefusal } from './authorization-error.js';
export { clientCredentialsToken } from './client-credentials.js';
export { createDiscoveryCache, type DiscoveryCache } from './discovery-cache.js';
export { createJwksCache, type JwksCache } from './jwks-cache.js';
export { allowsHttp, formPostChannel } from './identity-fetch.js';
export { keyFetchFailuresAsUnavailable, oidcFailure, type OidcStep } from './oidc-error-codes.js';
export {
  CLOCK_TOLERANCE_SECONDS as idTokenClockToleranceSeconds,
  createRelyingParty,
  idTokenAlgorithms,
  type AuthorizationRequest,
  type AuthorizationResponse,
  type RelyingParty,
  type RelyingPartyClient,
} from './relying-party.js';
export {
  BACKCHANNEL_LOGOUT_EVENT,
  verifyLogoutToken,
  type LogoutTokenRules,
  type VerifiedLogoutToken,
} from './logout-token.js';
export {
  accessTokenAlgorithms,
  createAccessTokenVerifier,
  type AccessTokenVerifier,
  type IssuerInfo,
  type VerifiedAccessToken,
} from './access-token-verifier.js';
export {
  runIdentityEnvironmentChecks,
  type EnvironmentCheck,
  type EnvironmentCheckName,
  type IdentityEnvironmentCheckInput,
} from './identity-environment-checks.js';
