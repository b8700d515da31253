/** PostgreSQL's unique_violation, as reported by pg and PGlite alike. */
export function isUniqueViolation(error: unknown): error is { constraint?: string } {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505'
  );
}
