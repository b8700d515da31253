import type { IncomingMessage } from 'node:http';
import { GatewayError } from '@gateway/errors';
import { mediaTypeOf, tooLarge } from './raw-body.js';

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
  const bytes = bufferedBody(req, declaredLength) ?? (await readBody(req, limitBytes));
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GatewayError('VALIDATION_ERROR', 'The request body is not valid JSON.');
  }
}

/**
 * The body's bytes when all of them are in the request's buffer already, as they are for a
 * small request that arrived in one piece by the time the handler reads it (issue 8: no
 * listeners, promise or flowing mode per request). Only for a body framed by Content-Length
 * (node does not let more than that many bytes into the buffer) that no one has started
 * reading; undefined otherwise.
 */
function bufferedBody(req: IncomingMessage, declaredLength: number): Buffer | undefined {
  if (req.readableFlowing !== null || req.readableLength !== declaredLength) return undefined;
  return (req.read() as Buffer | null) ?? undefined;
}

/**
 * The body's bytes (events rather than an async iterator: cheaper on the hot paths).
 * PAYLOAD_TOO_LARGE past `limitBytes` (the rest is not read; the server discards it after the
 * answer); a request that ends before its body does rejects.
 */
function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error: Error | undefined) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      if (error !== undefined) {
        req.pause();
        reject(error);
      } else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) finish(tooLarge(limitBytes));
      else chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish(undefined));
    req.once('error', (error) => finish(error));
    req.once('close', () => finish(new Error('The request ended before its body did.')));
  });
}

function isJsonContentType(header: string | undefined): boolean {
  const mediaType = mediaTypeOf(header);
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}
