import { STATUS_CODES } from 'node:http';
import { Type } from 'typebox';

export type ErrorCode =
  | 'validation_error'
  | 'malformed_json'
  | 'invalid_query'
  | 'not_authenticated'
  | 'token_invalid'
  | 'token_expired'
  | 'invalid_credentials'
  | 'permission_denied'
  | 'not_found'
  | 'invalid_page'
  | 'method_not_allowed'
  | 'conflict'
  | 'duplicate'
  | 'invalid_transition'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'login_throttled'
  | 'internal_error'
  | 'unavailable';

import type { FieldError } from '../domain/field-error.js';

export type { FieldError };

/** The one error type services throw; the error handler turns it into problem+json. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string>; body?: Record<string, unknown> } = {},
  ) {
    // Client errors are expected and frequent (401, 404, 429): capturing a stack for each is
    // measurable under load and never shown, so none is captured.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
  }
}

export const notFound = (what = 'Not found.') => new AppError('not_found', 404, what);
export const forbidden = (detail = 'You do not have permission to perform this action.') =>
  new AppError('permission_denied', 403, detail);
export const conflict = (detail: string, code: ErrorCode = 'conflict') => new AppError(code, 409, detail);
export const validation = (errors: FieldError[]) =>
  new AppError('validation_error', 400, errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  errors?: FieldError[];
  [key: string]: unknown;
}

export function problem(status: number, code: ErrorCode, detail: string, requestId: string): Problem {
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, code, request_id: requestId };
}

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'Always `about:blank`: the `code` field names the problem.' }),
    title: Type.String({ description: 'The HTTP status phrase.' }),
    status: Type.Integer({ description: 'The HTTP status code.' }),
    detail: Type.String({ description: 'What went wrong, for a human.' }),
    code: Type.String({ description: 'Machine-readable problem code, e.g. `validation_error`, `not_found`.' }),
    request_id: Type.String({ description: 'The X-Request-Id of the request, to quote when reporting.' }),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String({ description: 'The field (dotted path for nested fields, index for list items).' }),
          message: Type.String({ description: 'What is wrong with it.' }),
        }),
        { description: 'Validation errors, one per field (only for 400 validation problems).' },
      ),
    ),
    retry_after: Type.Optional(Type.Integer({ description: 'Seconds to wait (only for 429).' })),
    allowed: Type.Optional(Type.Array(Type.String(), { description: 'Allowed target states (only for invalid_transition).' })),
  },
  { $id: 'Problem', title: 'Problem', description: 'RFC 9457 problem details.', additionalProperties: true },
);
