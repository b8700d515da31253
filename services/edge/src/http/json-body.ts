import type { IncomingMessage } from 'node:http';
import { GatewayError } from '@gateway/errors';

/**
 * Reads a JSON request body for one route (routes that take no body never pay for it).
 * Spec 7: a body that is not JSON is 415 UNSUPPORTED_MEDIA_TYPE, malformed JSON is 400
 * VALIDATION_ERROR. An absent body reads as `undefined`, so an operation whose schema
 * accepts that (logout, spec 4.6) can allow it.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const declaredLength = Number(req.headers['content-length'] ?? 'NaN');
  const hasBody = req.headers['transfer-encoding'] !== undefined || declaredLength > 0;
  if (!hasBody) return undefined;
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json.');
  }
  if (declaredLength > limitBytes) throw tooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GatewayError('VALIDATION_ERROR', 'The request body is not valid JSON.');
  }
}

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const mediaType = header.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

function tooLarge(limitBytes: number): GatewayError {
  return new GatewayError(
    'PAYLOAD_TOO_LARGE',
    `The request body is larger than ${limitBytes} bytes.`,
  );
}
