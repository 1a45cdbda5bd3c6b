/**
 * The SQLSTATE of an error PostgreSQL sent ('' when it gave none), or null when no server sent it:
 * the connection failed (refused, reset, cut, timed out). Errors from the server carry a severity.
 */
export function serverErrorCode(err: unknown): string | null {
  const e = err as { code?: unknown; severity?: unknown } | null;
  if (typeof e?.severity !== 'string') return null;
  return typeof e.code === 'string' ? e.code : '';
}
