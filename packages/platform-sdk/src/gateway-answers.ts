import { GatewayPlatformError } from './errors.js';
import type {
  AccountSession,
  EndOtherSessionsResult,
  EnvironmentTier,
  ExchangeResult,
  IntrospectedSession,
  LogoutResult,
  OnboardingStatus,
} from './gateway-types.js';

// Checks that a 2xx body from the gateway has the documented shape before the SDK hands it
// on typed: a platform must never act on a half-read answer (a missing environment key would
// otherwise pass the environment check as `undefined !== 'PROD'` only by luck). Unknown
// fields are kept (spec 9). A body that fails is INVALID_GATEWAY_RESPONSE.

type Json = Record<string, unknown>;

const TIERS: readonly EnvironmentTier[] = ['development', 'staging', 'production'];
const ONBOARDING_STATUSES: readonly OnboardingStatus[] = ['NOT_STARTED', 'IN_PROGRESS', 'COMPLETE'];

class ShapeError extends Error {}

function objectAt(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ShapeError(`${path} is not an object`);
  }
  return value as Json;
}

function stringAt(parent: Json, key: string, path: string): string {
  const value = parent[key];
  if (typeof value !== 'string') throw new ShapeError(`${path}.${key} is not a string`);
  return value;
}

function timestampAt(parent: Json, key: string, path: string): string {
  const value = stringAt(parent, key, path);
  if (Number.isNaN(Date.parse(value))) throw new ShapeError(`${path}.${key} is not a date-time`);
  return value;
}

function booleanAt(parent: Json, key: string, path: string): boolean {
  const value = parent[key];
  if (typeof value !== 'boolean') throw new ShapeError(`${path}.${key} is not a boolean`);
  return value;
}

function stringsAt(parent: Json, key: string, path: string): string[] {
  const value = parent[key];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new ShapeError(`${path}.${key} is not a list of strings`);
  }
  return value as string[];
}

function oneOf<T extends string>(value: string, allowed: readonly T[], path: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ShapeError(`${path} is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function checkEnvironment(body: Json, path: string): void {
  const environment = objectAt(body.environment, `${path}.environment`);
  stringAt(environment, 'key', `${path}.environment`);
  oneOf(stringAt(environment, 'tier', `${path}.environment`), TIERS, `${path}.environment.tier`);
}

function readAnswer<T>(operation: string, body: unknown, check: (body: Json) => void): T {
  try {
    check(objectAt(body, 'body'));
    return body as T;
  } catch (error) {
    if (!(error instanceof ShapeError)) throw error;
    throw new GatewayPlatformError(
      'INVALID_GATEWAY_RESPONSE',
      `The gateway's ${operation} answer is not the documented shape: ${error.message}`,
      { cause: error },
    );
  }
}

/** Spec 4.4: the 200 body of the exchange. */
export function readExchangeResult(body: unknown): ExchangeResult {
  return readAnswer<ExchangeResult>('exchange', body, (json) => {
    const session = objectAt(json.session, 'session');
    stringAt(session, 'id', 'session');
    timestampAt(session, 'expiresAt', 'session');
    if (stringAt(session, 'gatewayToken', 'session') === '') {
      throw new ShapeError('session.gatewayToken is empty');
    }
    const user = objectAt(json.user, 'user');
    stringAt(user, 'id', 'user');
    stringAt(user, 'sub', 'user');
    stringAt(user, 'issuer', 'user');
    if (user.picture !== undefined) stringAt(user, 'picture', 'user');
    stringAt(objectAt(json.platform, 'platform'), 'key', 'platform');
    checkEnvironment(json, 'body');
    const onboarding = objectAt(json.onboarding, 'onboarding');
    oneOf(stringAt(onboarding, 'status', 'onboarding'), ONBOARDING_STATUSES, 'onboarding.status');
    if (!Number.isInteger(onboarding.requirementVersion)) {
      throw new ShapeError('onboarding.requirementVersion is not an integer');
    }
    stringsAt(onboarding, 'missingFields', 'onboarding');
    booleanAt(onboarding, 'canCompleteCentrally', 'onboarding');
    const profile = objectAt(json.profile, 'profile');
    stringAt(profile, 'status', 'profile');
    stringsAt(profile, 'missingFields', 'profile');
    stringsAt(json, 'permissions', 'body');
    stringAt(json, 'returnTo', 'body');
  });
}

/**
 * Spec 4.5: the 200 body of introspect, as the session when `active: true`, or undefined
 * when `active: false`. The `active` flag itself is not part of the returned session.
 */
export function readIntrospection(body: unknown): IntrospectedSession | undefined {
  const json = readAnswer<Json>('introspect', body, (answer) => {
    booleanAt(answer, 'active', 'body');
    if (answer.active !== true) return;
    stringAt(answer, 'sessionId', 'body');
    timestampAt(answer, 'expiresAt', 'body');
    stringAt(answer, 'platformKey', 'body');
    const user = objectAt(answer.user, 'user');
    stringAt(user, 'id', 'user');
    stringAt(user, 'issuer', 'user');
    stringAt(user, 'subject', 'user');
    if (user.email !== null) stringAt(user, 'email', 'user');
    booleanAt(user, 'emailVerified', 'user');
    stringAt(user, 'status', 'user');
    checkEnvironment(answer, 'body');
  });
  if (json.active !== true) return undefined;
  const session: Json = { ...json };
  delete session.active;
  return session as IntrospectedSession;
}

/** Spec 4.6: the 200 body of logout. */
export function readLogoutResult(body: unknown): LogoutResult {
  const json = readAnswer<Json>('logout', body, (answer) => {
    if (answer.logoutUrl !== null) stringAt(answer, 'logoutUrl', 'body');
  });
  return { logoutUrl: json.logoutUrl as string | null };
}

/** `GET /v1/account/sessions`: the 200 body's `items`. */
export function readAccountSessions(body: unknown): AccountSession[] {
  const json = readAnswer<Json>('session list', body, (answer) => {
    const items = answer.items;
    if (!Array.isArray(items)) throw new ShapeError('body.items is not a list');
    items.forEach((item: unknown, index) => {
      const path = `items.${index}`;
      const session = objectAt(item, path);
      stringAt(session, 'id', path);
      if (session.platform !== null) {
        const platform = objectAt(session.platform, `${path}.platform`);
        stringAt(platform, 'key', `${path}.platform`);
        stringAt(platform, 'name', `${path}.platform`);
      }
      checkEnvironment(session, path);
      timestampAt(session, 'createdAt', path);
      timestampAt(session, 'expiresAt', path);
      booleanAt(session, 'current', path);
    });
  });
  return json.items as AccountSession[];
}

/** `DELETE /v1/account/sessions?except=current`: the 200 body. */
export function readEndOtherSessionsResult(body: unknown): EndOtherSessionsResult {
  const json = readAnswer<Json>('sign-out of the other sessions', body, (answer) => {
    if (!Number.isInteger(answer.revokedSessions) || (answer.revokedSessions as number) < 0) {
      throw new ShapeError('body.revokedSessions is not a count');
    }
  });
  return { revokedSessions: json.revokedSessions as number };
}
