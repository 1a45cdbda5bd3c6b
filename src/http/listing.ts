import type { FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { ListResult } from '../db/listing.js';
import { invalidPage } from './list-query.js';

// A list's query is parsed by list-query.ts and its SQL run by db/listing.ts; this is the answer:
// the envelope and its links.

export interface Page<T> {
  count: number;
  count_exact?: boolean;
  count_estimated?: boolean;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** The DRF envelope of a page: absolute next/previous links keeping the request's other parameters. */
export function envelope<T>(request: FastifyRequest, { count, countExact, countEstimated, page, pageSize, results }: ListResult<T>): Page<T> {
  // A count that stopped short is at least the page's end, and more records follow.
  const last = countExact === false ? page + 1 : Math.max(1, Math.ceil(count / pageSize));
  // A page past the last is 404 invalid_page; page 1 of nothing is fine.
  if (page > last) throw invalidPage();
  return {
    count,
    ...(countExact === undefined ? {} : { count_exact: countExact }),
    ...(countEstimated ? { count_estimated: true } : {}),
    next: page < last ? pageUrl(request, page + 1) : null,
    previous: page > 1 ? pageUrl(request, page - 1) : null,
    results,
  };
}

/**
 * Sends a page whose results are JSON texts already (built by the database): a string with a JSON
 * content type goes out as it is, past the route's response serializer.
 */
export function sendJsonPage(reply: FastifyReply, page: Page<string>): FastifyReply {
  const exact = (page.count_exact === undefined ? '' : `"count_exact":${page.count_exact},`) + (page.count_estimated ? '"count_estimated":true,' : '');
  return sendJson(reply, `{"count":${page.count},${exact}"next":${JSON.stringify(page.next)},"previous":${JSON.stringify(page.previous)},"results":[${page.results.join(',')}]}`);
}

/** Sends JSON text as it is (see sendJsonPage). */
export function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

/**
 * The base of the absolute URLs the API writes: THREATMON_PUBLIC_URL when set; otherwise the
 * request's scheme and host (X-Forwarded-* only with THREATMON_TRUST_PROXY), which any client can
 * set with a Host header.
 */
export function publicBase(request: FastifyRequest): string {
  return request.server.deps.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

function pageUrl(request: FastifyRequest, page: number): string {
  const [path, qs = ''] = request.url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(qs);
  params.set('page', String(page));
  return `${publicBase(request)}${path}?${params.toString()}`;
}

/** The envelope schema for a list of `item`. */
export function PageSchema<T extends TSchema>(item: T, description?: string) {
  return Type.Object(pageProperties(item), { description });
}

/** The envelope of a list that may stop counting (the leak search): `count_exact` says whether it did. */
export function CappedPageSchema<T extends TSchema>(item: T, description?: string) {
  const { count: _count, ...rest } = pageProperties(item);
  return Type.Object(
    {
      count: Type.Integer({ description: 'Number of records matching the request: exact when count_exact is true; else a lower bound (more match), or an estimate when count_estimated is true.' }),
      count_exact: Type.Boolean({ description: 'False when the search stopped counting (past its count limit, 10,000 by default, or its page\'s end): count is then a lower bound and next is set.' }),
      count_estimated: Type.Optional(
        Type.Boolean({
          description:
            'Present (true) when count was not counted but estimated from the database\'s statistics, rounded to two significant figures: PostgreSQL, a full-text search that the statistics put at more than three times the count limit (count_exact is then false and next is set). exact_count=true counts instead.',
        }),
      ),
      ...rest,
    },
    { description },
  );
}

function pageProperties<T extends TSchema>(item: T) {
  return {
    count: Type.Integer({ description: 'Total number of records matching the request.' }),
    next: Type.Union([Type.String(), Type.Null()], { description: 'Absolute URL of the next page, or null.' }),
    previous: Type.Union([Type.String(), Type.Null()], { description: 'Absolute URL of the previous page, or null.' }),
    results: Type.Array(item, { description: 'The records of this page.' }),
  };
}
