export {
  discoveryUrl,
  fetchDiscoveryDocument,
  parseDiscoveryDocument,
  type DiscoveryDocument,
} from './discovery-document.js';
export { authorizationErrorRefusal } from './authorization-error.js';
export { createDiscoveryCache, type DiscoveryCache } from './discovery-cache.js';
export { createJwksCache, keyFetchFailuresAsUnavailable, type JwksCache } from './jwks-cache.js';
export { verifyJwt, type JwtVerifyOptions } from './jwt-verify.js';
export {
  BACKCHANNEL_LOGOUT_EVENT,
  verifyLogoutToken,
  type LogoutTokenRules,
  type VerifiedLogoutToken,
} from './logout-token.js';
export { formPostChannel, postForm, type FormPostResult } from './post-form.js';
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
