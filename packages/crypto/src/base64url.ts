// Strict base64url helpers. Buffer.from(x, 'base64url') silently skips characters outside the
// alphabet, so anything that decodes secrets or ciphertext parts checks the text first.

const BASE64URL_PATTERN = /^[A-Za-z0-9_-]*$/;

/** Encodes bytes as unpadded base64url. */
export function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/**
 * Decodes canonical, unpadded base64url. Returns undefined when the text contains other
 * characters or is not the canonical encoding of its bytes (so two different strings never
 * decode to the same bytes).
 */
export function fromBase64Url(text: string): Buffer | undefined {
  if (!BASE64URL_PATTERN.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}
