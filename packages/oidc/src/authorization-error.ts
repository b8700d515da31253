import { GatewayError } from '@gateway/errors';

// RFC 6749 section 4.1.2.1: error codes are printable ASCII without `"` and `\`. Anything
// else is not echoed.
const AUTHORIZATION_ERROR_CODE = /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,100}$/;

/**
 * Spec 4.2, 7: the refusal of an authorization response that carries an `error` instead of a
 * code (the user cancelled, the provider needs a login, ...): 400 VALIDATION_ERROR, and the
 * browser stays on the gateway. The provider's code is named in `details.identityError` only
 * when it is well-formed, since the query is written by whoever sent the browser here. The
 * edge answers it for a callback without a state; the auth-flow for one with a state, after
 * consuming the login that state names.
 */
export function authorizationErrorRefusal(error: string): GatewayError {
  return new GatewayError(
    'VALIDATION_ERROR',
    'The identity provider answered with an error instead of a code.',
    AUTHORIZATION_ERROR_CODE.test(error) ? { details: { identityError: error } } : undefined,
  );
}
