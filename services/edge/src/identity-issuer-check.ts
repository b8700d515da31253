import { fromConnectError } from '@gateway/errors';
import { fetchDiscoveryDocument } from '@gateway/oidc';

/** What the edge last learnt of the deployment identity issuer's discovery document. */
export type IdentityIssuerState =
  | { status: 'unchecked' }
  | { status: 'reachable'; checkedAt: string }
  | {
      status: 'unreachable';
      checkedAt: string;
      /** Short and safe to show on a public endpoint: no address, no upstream body. */
      error: string;
      /** The underlying failure, for the log only. */
      cause: unknown;
    };

export type IdentityIssuerCheck = {
  /** The deployment environment's key (`PROD`). */
  environmentKey: string;
  /** IDENTITY_ISSUER. */
  issuer: string;
  /**
   * The last result, never waiting: a result older than the check's freshness (or none yet)
   * starts a new check in the background, which the next call sees.
   */
  current(): IdentityIssuerState;
  /** Checks now and answers the result; calls while one runs share it. */
  check(): Promise<IdentityIssuerState>;
};

/** How long a result is reported before it is checked again. */
export const ISSUER_CHECK_FRESH_MS = 30_000;

/**
 * Whether the deployment identity issuer (IDENTITY_ISSUER) answers its discovery document.
 * A gateway whose issuer does not answer still starts and serves (spec 4.14: readiness checks
 * the persistent store), but sign-in fails until it does: the start says so, and readiness
 * reports it in its details without changing its status. One check at a time, at most one
 * per freshness period however often readiness is asked, so that probes and callers of the
 * public readiness endpoint cannot make the gateway flood the issuer.
 */
export function createIdentityIssuerCheck(options: {
  issuer: string;
  environmentKey?: string;
  timeoutMs: number;
  freshForMs?: number;
}): IdentityIssuerCheck {
  const freshForMs = options.freshForMs ?? ISSUER_CHECK_FRESH_MS;
  let state: IdentityIssuerState = { status: 'unchecked' };
  let checkedAtMs = Number.NEGATIVE_INFINITY;
  let running: Promise<IdentityIssuerState> | undefined;

  const check = (): Promise<IdentityIssuerState> => {
    running ??= checkOnce(options.issuer, options.timeoutMs).then((result) => {
      state = result;
      checkedAtMs = Date.now();
      running = undefined;
      return result;
    });
    return running;
  };

  return {
    environmentKey: options.environmentKey ?? 'PROD',
    issuer: options.issuer,
    current() {
      if (Date.now() - checkedAtMs >= freshForMs) void check();
      return state;
    },
    check,
  };
}

async function checkOnce(issuer: string, timeoutMs: number): Promise<IdentityIssuerState> {
  try {
    await fetchDiscoveryDocument(issuer, { timeoutMs });
    return { status: 'reachable', checkedAt: new Date().toISOString() };
  } catch (failure) {
    const error = fromConnectError(failure);
    const code = errnoCodeOf(error.cause);
    return {
      status: 'unreachable',
      checkedAt: new Date().toISOString(),
      error: code === undefined ? error.message : `${error.message.replace(/\.$/, '')} (${code}).`,
      cause: error.cause ?? error,
    };
  }
}

/** The system error code (ECONNREFUSED, ENOTFOUND, ...) somewhere in a fetch failure's causes. */
function errnoCodeOf(failure: unknown): string | undefined {
  let current = failure;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The underlying failure in words, for the operator's log: `connect ECONNREFUSED 127.0.0.1:9`. */
export function describeIssuerFailure(state: IdentityIssuerState): string {
  if (state.status !== 'unreachable') return '';
  let current = state.cause;
  let deepest: string | undefined;
  // Not `instanceof Error`: fetch's errors may come from another realm (test sandboxes).
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const { message, name, cause } = current as {
      message?: unknown;
      name?: unknown;
      cause?: unknown;
    };
    // undici's own wrapper says nothing; the error under it names the address and the reason.
    if (typeof message === 'string' && message !== 'fetch failed' && name !== 'GatewayError') {
      deepest = message;
    }
    current = cause;
  }
  return deepest === undefined ? state.error : `${state.error.replace(/\.$/, '')}: ${deepest}`;
}
