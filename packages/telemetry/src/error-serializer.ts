import { Code, ConnectError } from '@connectrpc/connect';

/** What a log line shows of an error under `err`. */
export type SerializedError = {
  type: string;
  message: string;
  /** The spec code of a GatewayError, the Connect code name, or a system code (`ECONNREFUSED`). */
  code?: string | number;
  /** The spec code a Connect error carries in its GatewayErrorDetail. */
  errorCode?: string;
  stack?: string;
  /** One short line per cause, outermost first. */
  causes?: string[];
};

const GATEWAY_ERROR_DETAIL = 'common.v1.GatewayErrorDetail';
const MAX_CAUSES = 5;
const MAX_CAUSE_MESSAGE = 300;

/**
 * pino's `err` serializer. A Connect error's details hold the protobuf descriptor of each
 * detail (kilobytes of schema), and its metadata the call's headers: the line keeps the
 * code, the message, the spec code of its GatewayErrorDetail and a short cause chain instead.
 * Details of a GatewayError are left out too: they are the answer's business, not the log's.
 */
export function serializeError(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const serialized: SerializedError = {
    type: value.constructor.name,
    message: value instanceof ConnectError ? value.rawMessage : value.message,
  };
  const code = codeOf(value);
  if (code !== undefined) serialized.code = code;
  const errorCode = value instanceof ConnectError ? specCodeOf(value) : undefined;
  if (errorCode !== undefined) serialized.errorCode = errorCode;
  if (value.stack !== undefined) serialized.stack = value.stack;
  const causes = causeChainOf(value);
  if (causes.length > 0) serialized.causes = causes;
  return serialized;
}

function codeOf(error: Error): string | number | undefined {
  if (error instanceof ConnectError) return Code[error.code];
  const { code } = error as { code?: unknown };
  return typeof code === 'string' || typeof code === 'number' ? code : undefined;
}

function causeChainOf(error: Error): string[] {
  const causes: string[] = [];
  let current: unknown = error.cause;
  while (current !== undefined && current !== null && causes.length < MAX_CAUSES) {
    causes.push(briefly(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return causes;
}

function briefly(cause: unknown): string {
  if (!(cause instanceof Error)) return typeof cause === 'string' ? cause : typeof cause;
  const code = codeOf(cause);
  const errorCode = cause instanceof ConnectError ? specCodeOf(cause) : undefined;
  const codes = [code, errorCode].filter((part) => part !== undefined).join(' ');
  const message = cause instanceof ConnectError ? cause.rawMessage : cause.message;
  const text = `${cause.constructor.name}${codes === '' ? '' : ` [${codes}]`}: ${message}`;
  return text.length > MAX_CAUSE_MESSAGE ? `${text.slice(0, MAX_CAUSE_MESSAGE)}...` : text;
}

/**
 * The `code` of a GatewayErrorDetail: from the value of a detail raised here (it carries its
 * descriptor), or read from the bytes of one received over the wire (field 1, a string).
 * This package knows no generated schema, so the one field is decoded by hand.
 */
function specCodeOf(error: ConnectError): string | undefined {
  for (const detail of error.details) {
    if ('desc' in detail) {
      if (detail.desc.typeName !== GATEWAY_ERROR_DETAIL) continue;
      const code = (detail.value as { code?: unknown }).code;
      if (typeof code === 'string') return code;
    } else if (detail.type === GATEWAY_ERROR_DETAIL) {
      return firstStringField(detail.value);
    }
  }
  return undefined;
}

function firstStringField(bytes: Uint8Array): string | undefined {
  // Tag of field 1, wire type 2 (length-delimited); the code comes first when present.
  if (bytes[0] !== 0x0a) return undefined;
  let length = 0;
  let shift = 0;
  let index = 1;
  for (; index < bytes.length && index < 6; index++) {
    const byte = bytes[index] ?? 0;
    length |= (byte & 0x7f) << shift;
    shift += 7;
    if ((byte & 0x80) === 0) break;
  }
  const start = index + 1;
  if (start + length > bytes.length) return undefined;
  return new TextDecoder().decode(bytes.subarray(start, start + length));
}
