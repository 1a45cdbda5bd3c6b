import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';
import { HibpError } from './hibp.service.js';

/** Errors as Have I Been Pwned answers them: its status codes and bodies, not problem+json. */

export const rateLimited = (seconds: number) => new HibpError(429, `Rate limit is exceeded. Try again in ${seconds} seconds.`, { 'retry-after': String(seconds) });

/** Any error of these routes as Have I Been Pwned answers it. */
export function toHibpError(err: FastifyError, request: FastifyRequest): HibpError {
  if (err instanceof HibpError) return err;
  const status = err instanceof AppError ? err.status : err.validation ? 400 : err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  // The password range says why in text, as Pwned Passwords does; the API's 400s and 404s have no body.
  if (status === 400 && request.routeOptions.config.hibp === 'range') return new HibpError(400, 'The hash prefix was not in a valid format');
  if (status === 400 || status === 404) return new HibpError(status, err.message, {}, true);
  if (err instanceof AppError) {
    if (status === 429) return rateLimited(Number(err.extra.headers?.['retry-after'] ?? 1));
    if (status === 401) return new HibpError(401, 'Access denied due to invalid hibp-api-key.');
    return new HibpError(status, err.detail, err.extra.headers);
  }
  if (status === 500) request.log.error({ err, request_id: request.id }, 'request failed');
  return new HibpError(status, status === 500 ? 'An unexpected error occurred.' : err.message);
}

export function sendHibpError(e: HibpError, reply: FastifyReply) {
  reply.code(e.status).headers(e.headers);
  if (e.empty) return reply.send();
  if (e.status === 400) return reply.type('text/plain').serializer((x: unknown) => x as string).send(e.message);
  return reply.type('application/json; charset=utf-8').serializer(JSON.stringify).send({ statusCode: e.status, message: e.message });
}
