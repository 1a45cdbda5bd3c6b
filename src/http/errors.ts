import { STATUS_CODES } from 'node:http';
import { Type } from 'typebox';

import type { FieldError } from '../domain/field-error.js';
import type { ErrorCode } from '../errors.js';

export { AppError, conflict, type ErrorCode, type FieldError, forbidden, notFound, validation } from '../errors.js';

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
