import type { Request } from 'express';
import { GatewayError } from '@gateway/errors';

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaTypeOf(header: string | undefined): string {
  return header?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

/** 413 for a body above `limitBytes` (JSON bodies and the raw avatar upload alike). */
export function tooLarge(limitBytes: number): GatewayError {
  return new GatewayError(
    'PAYLOAD_TOO_LARGE',
    `The request body is larger than ${limitBytes} bytes.`,
  );
}

/**
 * Reads a raw (non-JSON) request body for the one route that takes one (the avatar upload).
 * The Content-Type must be one of `mediaTypes` (else 415 UNSUPPORTED_MEDIA_TYPE); a body
 * above `limitBytes` is 413 PAYLOAD_TOO_LARGE, refused from its Content-Length before
 * anything is read when declared, else as soon as the stream passes the limit.
 */
export async function readRawBody(
  req: Request,
  options: { limitBytes: number; mediaTypes: readonly string[] },
): Promise<{ mediaType: string; data: Buffer }> {
  const mediaType = mediaTypeOf(req.headers['content-type']);
  if (!options.mediaTypes.includes(mediaType)) {
    throw new GatewayError(
      'UNSUPPORTED_MEDIA_TYPE',
      `The request body must be one of ${options.mediaTypes.join(', ')}.`,
    );
  }
  if (Number(req.headers['content-length'] ?? '0') > options.limitBytes) {
    throw tooLarge(options.limitBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > options.limitBytes) throw tooLarge(options.limitBytes);
    chunks.push(chunk);
  }
  return { mediaType, data: Buffer.concat(chunks) };
}
