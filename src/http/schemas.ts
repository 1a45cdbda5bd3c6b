import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';

/** Shared schema pieces: ids, timestamps, nullable, the path id and error responses. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => UUID.test(value);
export const Uuid = (description: string) => Type.String({ format: 'uuid', description });
export const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
/**
 * The schema or null. A scalar becomes one schema with a type list (`{type: ["string", "null"]}`):
 * responses are serialised without trying each alternative of an anyOf through the validator (a
 * visible cost on a page of leak records). Objects and the rest stay an anyOf.
 */
export const Nullable = <T extends TSchema>(schema: T, description?: string): TUnsafe<Static<T> | null> => {
  const type = (schema as { type?: unknown }).type;
  const scalar = typeof type === 'string' && !['object', 'array', 'null'].includes(type) && !('enum' in schema) && !('const' in schema);
  if (scalar) {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...(description ? { description } : {}) });
  }
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()], description ? { description } : {}));
};

export const IdParams = Type.Object({ id: Uuid('The record id (UUID). Anything else answers 404.') });

const ProblemRef = Type.Ref('Problem');

const ERROR_TEXT: Record<number, string> = {
  400: 'Validation failed (`validation_error`, `malformed_json`, `invalid_query`).',
  401: 'Missing, invalid or expired token (`not_authenticated`, `token_invalid`, `token_expired`).',
  403: 'The role lacks this right (`permission_denied`).',
  404: 'No such record in your organization (`not_found`), or page past the end (`invalid_page`).',
  409: 'Conflicts with the current state (`conflict`, `duplicate`, `invalid_transition`).',
  412: 'If-Match does not match the current ETag (`precondition_failed`).',
  413: 'Body too large (`payload_too_large`).',
  415: 'Body is not JSON (`unsupported_media_type`).',
  429: 'Rate limit reached (`rate_limited`, `login_throttled`); see Retry-After.',
  503: 'The answer cannot be complete yet (`unavailable`): see Retry-After.',
};

/** problem+json responses for the given statuses, plus 429 and 500 that any request may get. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of [...statuses, 429]) out[s] = Type.Ref('Problem', { description: ERROR_TEXT[s] ?? 'Error.' }) as TSchema;
  return out;
}

export { ProblemRef };
