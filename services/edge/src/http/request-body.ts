import type { IncomingMessage } from 'node:http';
import { GatewayError } from '@gateway/errors';
import type { RawBody, RawBodySpec } from './operation.js';

/**
 * How long a request body may take to arrive once its headers have: a client that stops
 * sending holds its connection no longer than this, and no load-shedding slot at all.
 */
export const BODY_DEADLINE_MS = 5_000;

/** The default limit of a JSON body. */
export const JSON_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * How deeply objects and arrays may nest in a JSON body. Parsed values are walked by
 * recursive code (zod, JSON.stringify in the services); a body nested deeper is refused
 * before it is parsed, so no such walk can run out of stack.
 */
export const JSON_MAX_DEPTH = 32;

/**
 * A request body as received. A body the operation cannot take (another media type, too
 * large) is not read; its refusal is answered at validation, after authentication, so a
 * caller without credentials learns nothing about what the operation accepts.
 */
export type ReceivedBody =
  | { kind: 'none'; mediaType: string }
  | { kind: 'bytes'; mediaType: string; bytes: Buffer }
  | { kind: 'refused'; error: GatewayError };

export type BodyRules = {
  limitBytes: number;
  deadlineMs: number;
  /** Whether the operation takes a body of this media type (lower case, no parameters). */
  accepts(mediaType: string): boolean;
  unsupported: string;
};

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaTypeOf(header: string | undefined): string {
  return header?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

function tooLarge(limitBytes: number): GatewayError {
  return new GatewayError(
    'PAYLOAD_TOO_LARGE',
    `The request body is larger than ${limitBytes} bytes.`,
  );
}

/** 408 REQUEST_TIMEOUT: the body did not arrive within the deadline. */
export function bodyTimedOut(): GatewayError {
  return new GatewayError('REQUEST_TIMEOUT', 'The request body did not arrive in time.');
}

/**
 * Receives the body of a request, all of it, before anything else is done with the request.
 * Throws REQUEST_TIMEOUT when it has not arrived within `deadlineMs`, and the stream's own
 * error when the request ends before its body does.
 */
export async function receiveBody(req: IncomingMessage, rules: BodyRules): Promise<ReceivedBody> {
  const mediaType = mediaTypeOf(req.headers['content-type']);
  const declaredLength = Number(req.headers['content-length'] ?? 'NaN');
  const hasBody = req.headers['transfer-encoding'] !== undefined || declaredLength > 0;
  if (!hasBody) return { kind: 'none', mediaType };
  if (!rules.accepts(mediaType)) {
    return {
      kind: 'refused',
      error: new GatewayError('UNSUPPORTED_MEDIA_TYPE', rules.unsupported),
    };
  }
  if (declaredLength > rules.limitBytes) {
    return { kind: 'refused', error: tooLarge(rules.limitBytes) };
  }
  const bytes =
    bufferedBody(req, declaredLength) ?? (await readBody(req, rules.limitBytes, rules.deadlineMs));
  if (bytes === 'too-large') return { kind: 'refused', error: tooLarge(rules.limitBytes) };
  return { kind: 'bytes', mediaType, bytes };
}

/**
 * The body's bytes when all of them are in the request's buffer already, as they are for a
 * small request that arrived in one piece (no listeners, promise or flowing mode per
 * request). Only for a body framed by Content-Length (node does not let more than that many
 * bytes into the buffer) that no one has started reading; undefined otherwise.
 */
function bufferedBody(req: IncomingMessage, declaredLength: number): Buffer | undefined {
  if (req.readableFlowing !== null || req.readableLength !== declaredLength) return undefined;
  return (req.read() as Buffer | null) ?? undefined;
}

/**
 * The body's bytes as they arrive (events rather than an async iterator: cheaper on the hot
 * paths); 'too-large' past `limitBytes` (the rest is not read; the server discards it after
 * the answer).
 */
function readBody(
  req: IncomingMessage,
  limitBytes: number,
  deadlineMs: number,
): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    // The listeners go once the body is settled: a request's 'close' comes after its answer,
    // and must cost nothing then. The error listener stays, so that a late stream error (a
    // client gone during an unread rest) is never an unhandled one.
    const finish = (outcome: Buffer | 'too-large' | Error) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      if (outcome instanceof Error) {
        req.pause();
        reject(outcome);
        return;
      }
      if (outcome === 'too-large') req.pause();
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) finish('too-large');
      else chunks.push(chunk);
    };
    const onEnd = () => finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    const onError = (error: Error) => finish(error);
    const onClose = () => finish(new Error('The request ended before its body did.'));
    const deadline = setTimeout(() => finish(bodyTimedOut()), deadlineMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Spec 7: JSON bodies, `application/json` or `application/<something>+json`. */
export function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

/**
 * The JSON value of a received body. Spec 7: a body that is not JSON is 415
 * UNSUPPORTED_MEDIA_TYPE, malformed JSON is 400 VALIDATION_ERROR. An absent or blank body
 * reads as `undefined`, so an operation whose schema accepts that (logout, spec 4.6) can
 * allow it.
 */
export function jsonOf(received: ReceivedBody): unknown {
  if (received.kind === 'refused') throw received.error;
  if (received.kind === 'none') return undefined;
  const text = received.bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  if (jsonNestingExceeds(text, JSON_MAX_DEPTH)) {
    throw new GatewayError(
      'VALIDATION_ERROR',
      `The request body is nested more than ${JSON_MAX_DEPTH} levels deep.`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GatewayError('VALIDATION_ERROR', 'The request body is not valid JSON.');
  }
}

/**
 * Whether the brackets of a JSON text nest deeper than `maxDepth`, counting only those outside
 * strings (one pass, no parsing; malformed JSON is left to JSON.parse).
 */
export function jsonNestingExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c) index += 1;
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x7b || char === 0x5b) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (char === 0x7d || char === 0x5d) {
      depth -= 1;
    }
  }
  return false;
}

/** The media type of an HTML form's body. */
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** The fields of a form body: a field sent once is a string, a repeated one an array. */
export type FormFields = Record<string, string | string[]>;

/**
 * The fields of a received `application/x-www-form-urlencoded` body (WHATWG URL's parser:
 * never throws; malformed percent-encoding stays as sent). A field sent more than once is an
 * array of its values, so a schema that expects one string refuses it. An absent or blank
 * body reads as `undefined`.
 */
export function formOf(received: ReceivedBody): FormFields | undefined {
  if (received.kind === 'refused') throw received.error;
  if (received.kind === 'none') return undefined;
  const text = received.bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  const fields = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(text)) {
    const values = fields.get(name);
    if (values === undefined) fields.set(name, [value]);
    else values.push(value);
  }
  return Object.fromEntries(
    [...fields].map(([name, values]) => [
      name,
      values.length === 1 ? (values[0] as string) : values,
    ]),
  );
}

/** The rules of a raw body (the avatar upload): its media types and size. */
export function rawBodyRules(spec: RawBodySpec, deadlineMs: number): BodyRules {
  return {
    limitBytes: spec.limitBytes,
    deadlineMs,
    accepts: (mediaType) => spec.mediaTypes.includes(mediaType),
    unsupported: `The request body must be one of ${spec.mediaTypes.join(', ')}.`,
  };
}

/** A received raw body: one of the declared media types (415), within the limit (413). */
export function rawOf(received: ReceivedBody, spec: RawBodySpec): RawBody {
  if (received.kind === 'refused') throw received.error;
  if (!spec.mediaTypes.includes(received.mediaType)) {
    throw new GatewayError(
      'UNSUPPORTED_MEDIA_TYPE',
      `The request body must be one of ${spec.mediaTypes.join(', ')}.`,
    );
  }
  return {
    mediaType: received.mediaType,
    data: received.kind === 'bytes' ? received.bytes : Buffer.alloc(0),
  };
}
