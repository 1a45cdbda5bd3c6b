import type { FieldError } from './domain/field-error.js';

/**
 * The one error type every layer throws, at the bottom of the tree with config: services, lists
 * and repositories say what went wrong; http/ turns it into problem+json.
 */

export type { FieldError };

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
  | 'not_acceptable'
  | 'rate_limited'
  | 'login_throttled'
  | 'malformed_request'
  | 'headers_too_large'
  | 'request_timeout'
  | 'expectation_failed'
  | 'internal_error'
  | 'unavailable';


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
