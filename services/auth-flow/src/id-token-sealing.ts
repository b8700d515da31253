import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { fromBase64Url } from '@gateway/crypto';
import type { Keyring } from '@gateway/crypto';

/**
 * The ID token a session keeps for `id_token_hint` at logout (spec 2.6 "Stored encrypted, used
 * only as id_token_hint at logout"), sealed in as few bytes as we can: it is most of a
 * session's Redis memory, which is held to 1 KiB per live session.
 *
 * A compact JWS `<header>.<payload>.<signature>` is stored as its decoded bytes rather than
 * base64url text (a quarter smaller), with header and payload deflated against a preset
 * dictionary of the claim names and values ID tokens share (small JSON hardly compresses
 * without one), then encrypted with the keyring. Opening rebuilds the exact token text,
 * byte for byte: the packing is only taken when each part is canonical base64url (its bytes
 * encode to the same text again), otherwise the token is kept as it came.
 *
 * The session's own claims (issuer, subject, e-mail: its introspection snapshot, which never
 * changes for the session) are in the token too, so they join the dictionary: opening needs
 * the same session record that sealing had.
 *
 * Plaintext layouts (first byte):
 * - 0x02: packed JWS: varint header length, varint payload length, varint deflated length,
 *   the header+payload deflated against the dictionary followed by the session's claims,
 *   then the raw signature bytes up to the end.
 * - 0x00: the token's UTF-8 text follows (anything that is not a canonical compact JWS).
 * Anything else is refused (0x01 was the packing without the session's claims, for sessions
 * without a snapshot; none is read any more).
 */

const PLAIN_TEXT = 0x00;
const PACKED_JWS_WITH_CLAIMS = 0x02;

// Strings ID tokens share, most common last (deflate finds near matches more cheaply). Changing
// this breaks every stored token: a new dictionary needs a new layout byte.
const DICTIONARY = Buffer.from(
  [
    '"given_name":"',
    '"family_name":"',
    '"preferred_username":"',
    '"locale":"',
    '"updated_at":',
    '"session_state":"',
    '"azp":"',
    '"acr":"',
    '"amr":["pwd"]',
    '"picture":"https://',
    '"name":"',
    '"auth_time":',
    '"sid":"',
    '"at_hash":"',
    '"c_hash":"',
    '{"alg":"RS256","kid":"',
    '{"alg":"RS256","typ":"JWT","kid":"',
    '{"alg":"ES256","typ":"JWT","kid":"',
    '{"alg":"EdDSA","typ":"JWT","kid":"',
    '"email_verified":false,',
    '"email_verified":true,',
    '","email":"',
    '"nonce":"',
    '"iss":"https://',
    '"iss":"http://',
    '/api/auth/env/',
    '","aud":"',
    '"exp":',
    ',"iat":',
    '{"sub":"',
  ].join(''),
  'utf8',
);

/** What of its session an ID token is sealed with: the id as associated data, the claims. */
export type IdTokenSession = {
  id: string;
  snapshot: { issuer: string; subject: string; email: string | null };
};

// A 2 KiB window holds the dictionary, the claims and any header and payload worth packing;
// zlib's default 32 KiB window would cost more CPU per sign-in for nothing.
function zlibOptions(dictionary: Buffer) {
  return { dictionary, windowBits: 11, memLevel: 4, level: 9 } as const;
}

/** Encrypts the ID token for its session record (bound to the session id). */
export function sealIdToken(keyring: Keyring, idToken: string, session: IdTokenSession): string {
  return keyring.encrypt(packIdToken(idToken, session.snapshot), associatedData(session.id));
}

/** The exact ID token text sealed by sealIdToken. */
export function openIdToken(keyring: Keyring, sealed: string, session: IdTokenSession): string {
  return unpackIdToken(keyring.decrypt(sealed, associatedData(session.id)), session.snapshot);
}

function associatedData(sessionId: string): string {
  return `id-token:${sessionId}`;
}

function claimsDictionary(claims: IdTokenSession['snapshot']): Buffer {
  const text = `"${claims.email ?? ''}""${claims.issuer}""${claims.subject}"`;
  return Buffer.concat([DICTIONARY, Buffer.from(text, 'utf8')]);
}

/** Exported for tests: the plaintext layout described above. */
export function packIdToken(idToken: string, claims: IdTokenSession['snapshot']): Buffer {
  const parts = idToken.split('.');
  const decoded = parts.length === 3 ? parts.map(fromBase64Url) : [];
  const [header, payload, signature] = decoded;
  if (header === undefined || payload === undefined || signature === undefined) {
    return Buffer.concat([Buffer.of(PLAIN_TEXT), Buffer.from(idToken, 'utf8')]);
  }
  const deflated = deflateRawSync(
    Buffer.concat([header, payload]),
    zlibOptions(claimsDictionary(claims)),
  );
  return Buffer.concat([
    Buffer.of(PACKED_JWS_WITH_CLAIMS),
    varint(header.length),
    varint(payload.length),
    varint(deflated.length),
    deflated,
    signature,
  ]);
}

/** Exported for tests: the token text back from either layout. */
export function unpackIdToken(plaintext: Buffer, claims: IdTokenSession['snapshot']): string {
  const layout = plaintext[0];
  if (layout === PLAIN_TEXT) return plaintext.subarray(1).toString('utf8');
  if (layout !== PACKED_JWS_WITH_CLAIMS) throw new Error('Unknown sealed ID token layout');
  const dictionary = claimsDictionary(claims);
  const reader = { bytes: plaintext, offset: 1 };
  const headerLength = readVarint(reader);
  const payloadLength = readVarint(reader);
  const deflatedLength = readVarint(reader);
  const deflatedEnd = reader.offset + deflatedLength;
  if (deflatedEnd > plaintext.length) throw new Error('Packed ID token is truncated');
  const inflated = inflateRawSync(
    plaintext.subarray(reader.offset, deflatedEnd),
    zlibOptions(dictionary),
  );
  if (inflated.length !== headerLength + payloadLength) {
    throw new Error('Packed ID token has the wrong length');
  }
  return [
    inflated.subarray(0, headerLength).toString('base64url'),
    inflated.subarray(headerLength).toString('base64url'),
    plaintext.subarray(deflatedEnd).toString('base64url'),
  ].join('.');
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function readVarint(reader: { bytes: Buffer; offset: number }): number {
  let value = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    const byte = reader.bytes[reader.offset];
    if (byte === undefined) throw new Error('Packed ID token is truncated');
    reader.offset += 1;
    value |= (byte & 0x7f) << shift;
    if (byte < 0x80) return value;
  }
  throw new Error('Packed ID token has a malformed length');
}
