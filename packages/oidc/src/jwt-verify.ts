import {
  KeyObject,
  verify as verifySignature,
  type VerifyKeyObjectInput,
  type webcrypto,
} from 'node:crypto';
import {
  errors,
  type FlattenedJWSInput,
  type JWTHeaderParameters,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';

/**
 * A JWS compact serialisation verified with node:crypto, synchronously on the calling thread,
 * by the rules of jose's `jwtVerify` (which this replaces on the sign-in path: jose verifies
 * through WebCrypto, whose every call hops to the thread pool and back). Only asymmetric
 * algorithms are known here: EdDSA (Ed25519), RS256 and ES256 (IEEE P1363 signatures, as
 * RFC 7518 3.4 requires). Keys still come from jose's key sets (kid and algorithm selection,
 * fetching, caching and rotation unchanged); each key is turned into a KeyObject once.
 * Failures throw jose's own error classes with jose's messages.
 */
export type JwtVerifyOptions = {
  /** Allowed `alg` values; any outside this list (and `none`) is JOSEAlgNotAllowed. */
  algorithms: readonly string[];
  /** `iss` must equal this exactly. */
  issuer: string;
  /**
   * `aud` must be exactly this, or an array holding it alone (OIDC Core 3.1.3.7: an ID token
   * with another audience is not for this client alone).
   */
  audience: string;
  /**
   * When given, an `azp` claim present must equal it (OIDC Core 3.1.3.7: an ID token
   * authorized for another party is not this client's). Access tokens carry the requesting
   * client's id there, so they pass none.
   */
  authorizedParty?: string;
  /** Seconds of leeway for `exp`, `nbf` and an `iat` in the future. */
  clockTolerance: number;
  /** Claims that must be present (whatever their value). */
  requiredClaims?: readonly string[];
  currentDate?: Date;
};

type Algorithm = {
  /** The digest for crypto.verify (null: implied by the key, Ed25519). */
  digest: string | null;
  keyType: 'rsa' | 'ec' | 'ed25519';
  namedCurve?: string;
  dsaEncoding?: 'ieee-p1363';
  minRsaBits?: number;
};

const algorithms: Record<string, Algorithm> = {
  RS256: { digest: 'sha256', keyType: 'rsa', minRsaBits: 2048 },
  ES256: { digest: 'sha256', keyType: 'ec', namedCurve: 'prime256v1', dsaEncoding: 'ieee-p1363' },
  EdDSA: { digest: null, keyType: 'ed25519' },
};

const base64url = /^[A-Za-z0-9_-]*$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function decodeSegment(segment: string): Buffer {
  // Buffer's decoder skips characters outside the alphabet; jose's refuses them.
  if (!base64url.test(segment) || segment.length % 4 === 1)
    throw new TypeError('Invalid base64url');
  return Buffer.from(segment, 'base64url');
}

function parseJsonObject(segment: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8.decode(decodeSegment(segment)));
  } catch {
    return undefined;
  }
  return isObject(parsed) ? parsed : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  if (Object.prototype.toString.call(value) !== '[object Object]') return false;
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

/** KeyObjects of the CryptoKeys a key set hands out (it keeps one per JWK and algorithm). */
const keyObjects = new WeakMap<webcrypto.CryptoKey, KeyObject>();

/** WebCrypto's key class (a global, not an export of node:crypto, on Node 20). */
const CryptoKeyClass = (globalThis as { CryptoKey?: abstract new () => webcrypto.CryptoKey })
  .CryptoKey;

function isCryptoKey(key: unknown): key is webcrypto.CryptoKey {
  return CryptoKeyClass !== undefined && key instanceof CryptoKeyClass;
}

function keyObjectOf(key: unknown, alg: string): KeyObject {
  let keyObject: KeyObject;
  if (key instanceof KeyObject) {
    keyObject = key;
  } else if (isCryptoKey(key)) {
    if (!key.usages.includes('verify')) {
      throw new TypeError(
        'CryptoKey does not support this operation, its usages must include verify.',
      );
    }
    const cached = keyObjects.get(key);
    if (cached === undefined) {
      keyObject = KeyObject.from(key);
      keyObjects.set(key, keyObject);
    } else {
      keyObject = cached;
    }
  } else {
    throw new TypeError('Key for the verification of an ID token must be a public key.');
  }
  const algorithm = algorithms[alg];
  const details = keyObject.asymmetricKeyDetails;
  if (
    algorithm === undefined ||
    keyObject.type !== 'public' ||
    keyObject.asymmetricKeyType !== algorithm.keyType ||
    (algorithm.namedCurve !== undefined && details?.namedCurve !== algorithm.namedCurve)
  ) {
    throw new TypeError(`The key is not usable with the "${alg}" algorithm.`);
  }
  if (algorithm.minRsaBits !== undefined && (details?.modulusLength ?? 0) < algorithm.minRsaBits) {
    throw new TypeError(`${alg} requires key modulusLength to be 2048 bits or larger`);
  }
  return keyObject;
}

/** jose's `crit` rules (RFC 7515 4.1.11) with `b64` (RFC 7797) the only known extension. */
function validateCrit(header: Record<string, unknown>): boolean {
  const { crit } = header;
  if (crit === undefined) return true;
  if (
    !Array.isArray(crit) ||
    crit.length === 0 ||
    crit.some((item) => typeof item !== 'string' || item.length === 0)
  ) {
    throw new errors.JWSInvalid(
      '"crit" (Critical) Header Parameter MUST be an array of non-empty strings when present',
    );
  }
  for (const parameter of crit as string[]) {
    if (parameter !== 'b64') {
      throw new errors.JOSENotSupported(
        `Extension Header Parameter "${parameter}" is not recognized`,
      );
    }
    if (!Object.hasOwn(header, parameter) || header[parameter] === undefined) {
      throw new errors.JWSInvalid(`Extension Header Parameter "${parameter}" is missing`);
    }
  }
  if (typeof header.b64 !== 'boolean') {
    throw new errors.JWSInvalid(
      'The "b64" (base64url-encode payload) Header Parameter must be a boolean',
    );
  }
  return header.b64;
}

/** Verifies a signed JWT: header, key, signature, then the claims (jose's order). */
export async function verifyJwt(
  token: string,
  getKey: JWTVerifyGetKey,
  options: JwtVerifyOptions,
): Promise<{ payload: JWTPayload; protectedHeader: JWTHeaderParameters }> {
  if (typeof token !== 'string') throw new errors.JWSInvalid('Compact JWS must be a string');
  const parts = token.split('.');
  if (parts.length !== 3) throw new errors.JWSInvalid('Invalid Compact JWS');
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  const header = parseJsonObject(encodedHeader);
  if (header === undefined) throw new errors.JWSInvalid('JWS Protected Header is invalid');
  const b64 = validateCrit(header);
  const { alg } = header;
  if (typeof alg !== 'string' || alg === '') {
    throw new errors.JWSInvalid('JWS "alg" (Algorithm) Header Parameter missing or invalid');
  }
  if (!options.algorithms.includes(alg)) {
    throw new errors.JOSEAlgNotAllowed('"alg" (Algorithm) Header Parameter value not allowed');
  }
  if (!base64url.test(encodedPayload)) {
    throw new errors.JWSInvalid('The payload is not a valid base64url string');
  }
  const protectedHeader = header as JWTHeaderParameters;
  const jws: FlattenedJWSInput = {
    payload: encodedPayload,
    protected: encodedHeader,
    signature: encodedSignature,
  };
  const key = keyObjectOf(await getKey(protectedHeader, jws), alg);
  const algorithm = algorithms[alg];
  if (algorithm === undefined) throw new errors.JOSENotSupported(`Unsupported "alg" ${alg}`);
  let signature: Buffer;
  try {
    signature = decodeSegment(encodedSignature);
  } catch (cause) {
    throw new errors.JWSInvalid('Failed to base64url decode the signature', { cause });
  }
  let verified: boolean;
  try {
    verified = verifySignature(
      algorithm.digest,
      Buffer.from(`${encodedHeader}.${encodedPayload}`, 'latin1'),
      (algorithm.dsaEncoding === undefined
        ? key
        : { key, dsaEncoding: algorithm.dsaEncoding }) as VerifyKeyObjectInput,
      signature,
    );
  } catch (cause) {
    throw new errors.JWSSignatureVerificationFailed(undefined, { cause });
  }
  if (!verified) throw new errors.JWSSignatureVerificationFailed();
  if (!b64) throw new errors.JWTInvalid('JWTs MUST NOT use unencoded payload');
  const claims = parseJsonObject(encodedPayload);
  if (claims === undefined) {
    throw new errors.JWTInvalid('JWT Claims Set must be a top-level JSON object');
  }
  return { payload: validateClaims(claims as JWTPayload, options), protectedHeader };
}

/** jose's validateClaimsSet for the options above. */
function validateClaims(claims: JWTPayload, options: JwtVerifyOptions): JWTPayload {
  const failed = (message: string, claim: string, reason: string) =>
    new errors.JWTClaimValidationFailed(message, claims, claim, reason);
  // jose checks presence in this order: iss, aud, then the required claims from the last.
  const presence = new Set([...(options.requiredClaims ?? []), 'aud', 'iss'].reverse());
  for (const claim of presence) {
    if (!Object.hasOwn(claims, claim)) {
      throw failed(`missing required "${claim}" claim`, claim, 'missing');
    }
  }
  if (claims.iss !== options.issuer)
    throw failed('unexpected "iss" claim value', 'iss', 'check_failed');
  const { aud } = claims;
  const audienceAlone = Array.isArray(aud) && aud.length === 1 && aud[0] === options.audience;
  if (!(aud === options.audience || audienceAlone)) {
    throw failed('unexpected "aud" claim value', 'aud', 'check_failed');
  }
  if (
    options.authorizedParty !== undefined &&
    claims.azp !== undefined &&
    claims.azp !== options.authorizedParty
  ) {
    throw failed('unexpected "azp" claim value', 'azp', 'check_failed');
  }
  const tolerance = options.clockTolerance;
  if (!Number.isFinite(tolerance) || tolerance < 0)
    throw new TypeError('Invalid clockTolerance option input');
  const now = Math.floor((options.currentDate ?? new Date()).getTime() / 1000);
  const numericDate = (claim: 'iat' | 'nbf' | 'exp'): number | undefined => {
    const value = claims[claim];
    if (value === undefined) return undefined;
    if (typeof value !== 'number')
      throw failed(`"${claim}" claim must be a number`, claim, 'invalid');
    return value;
  };
  const iat = numericDate('iat');
  if (iat !== undefined && iat > now + tolerance) {
    throw failed('"iat" claim timestamp check failed (in the future)', 'iat', 'check_failed');
  }
  const nbf = numericDate('nbf');
  if (nbf !== undefined && nbf > now + tolerance) {
    throw failed('"nbf" claim timestamp check failed', 'nbf', 'check_failed');
  }
  const exp = numericDate('exp');
  if (exp !== undefined && exp <= now - tolerance) {
    throw new errors.JWTExpired(
      '"exp" claim timestamp check failed',
      claims,
      'exp',
      'check_failed',
    );
  }
  return claims;
}
