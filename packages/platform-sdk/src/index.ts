// @gateway/platform-sdk: what a platform's Node backend needs to sign users in through the
// central authentication gateway (spec 1: start redirect, callback, server-to-server
// exchange, logout; spec 4.5 introspection with its cache; spec 4.4 login-CSRF protection).

export { createGatewayPlatform } from './gateway-platform.js';
export type { GatewayPlatform } from './gateway-platform.js';
export type { GatewayPlatformOptions, PendingCookieOptions, PlatformKey } from './options.js';
export type { OnboardingMode, StartLogin, StartLoginRequest } from './start-login.js';
export type { CallbackRequest, CallbackResult } from './handle-callback.js';
export type { LogoutRequest } from './logout.js';
export type { EndOtherSessionsRequest } from './account-sessions.js';
export type {
  AccountSession,
  EndOtherSessionsResult,
  EnvironmentTier,
  ExchangeResult,
  IntrospectedSession,
  IntrospectionResult,
  LogoutResult,
  OnboardingStatus,
} from './gateway-types.js';
export { GatewayPlatformError, isGatewayUnavailable } from './errors.js';
export type { SdkErrorCode } from './errors.js';

// Express 5 middleware (express is an optional peer dependency; only its types are used).
export { gatewayAuth } from './express/gateway-auth.js';
export type { GatewayAuthOptions } from './express/gateway-auth.js';
export { getSignedIn } from './express/auth-context.js';
export type { SignedIn } from './express/auth-context.js';
export { optionalSignIn, requireSignIn } from './express/require-sign-in.js';
export { createMemorySessionStore } from './express/session-store.js';
export type {
  MaybePromise,
  MemorySessionStoreOptions,
  SessionStore,
} from './express/session-store.js';
