import { GatewayError } from '@gateway/errors';
import type { FieldDefinitionIssue } from '@gateway/field-rules';

// Errors shared by the platform and global field definition stores.

/** 400 VALIDATION_ERROR naming each offending property, as the edge reports a body. */
export function invalidDefinition(issues: readonly FieldDefinitionIssue[]): GatewayError {
  return new GatewayError('VALIDATION_ERROR', 'Invalid request body.', {
    details: {
      issues: issues.map((issue) => ({
        location: 'body',
        path: issue.path.map(String).join('.'),
        message: issue.message,
      })),
    },
  });
}

type ParseResult<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: readonly { path: PropertyKey[]; message: string }[] } };

/** The parsed body, or 400 VALIDATION_ERROR naming each issue. */
export function parsedDefinition<T>(result: ParseResult<T>): T {
  if (result.success) return result.data;
  throw invalidDefinition(
    result.error.issues.map((issue) => ({
      path: issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
      message: issue.message,
    })),
  );
}
