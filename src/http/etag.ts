import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';

export const etagOf = (version: number) => `"${version}"`;

function listed(header: string | undefined, tag: string, weakMatches: boolean): boolean {
  if (!header) return false;
  return header.split(',').some((raw) => {
    const t = raw.trim();
    if (t === '*') return true;
    return t === tag || (weakMatches && t === `W/${tag}`);
  });
}

/**
 * Sets the strong ETag of a single record; answers 304 when If-None-Match already names it.
 * Returns true when the 304 was sent, so the handler returns without a body.
 */
export function notModified(request: FastifyRequest, reply: FastifyReply, version: number): boolean {
  const tag = etagOf(version);
  reply.header('etag', tag);
  if (listed(request.headers['if-none-match'], tag, true)) {
    reply.code(304).send();
    return true;
  }
  return false;
}

/** If-Match on a write: a mismatch (strong comparison) is 412 and nothing changes. */
export function assertIfMatch(request: FastifyRequest, version: number): void {
  const header = request.headers['if-match'];
  if (header && !listed(header, etagOf(version), false)) {
    throw new AppError('precondition_failed', 412, `If-Match does not match the current ETag ${etagOf(version)}.`);
  }
}
