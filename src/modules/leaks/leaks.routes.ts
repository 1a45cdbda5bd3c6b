import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, principalOf } from '../identity/index.js';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { AppError, validation } from '../../http/errors.js';
import { badQuery, listQuerystring, parseList } from '../../http/list-query.js';
import { CappedPageSchema, envelope, PageSchema, sendJson, sendJsonPage } from '../../http/listing.js';
import { errorResponses, IdParams, isUuid } from '../../http/schemas.js';
import { IngestResultSchema, LeakRecordInputSchema, LeakRecordSchema, LeakSourceCreateSchema, LeakSourcePatchSchema, LeakSourceSchema, SavedSearchSchema, StatsSchema } from './leaks.schemas.js';
import { presentSaved, presentSource } from './leaks.presenters.js';
import type { LeaksService } from './leaks.service.js';
import { leakSearch, parseLeakSearch, SavedQuerySchema, savedSearchListing, sourceListing } from './leaks.lists.js';
import { type InputItem, ndjsonItems, openInput, UnknownLineFormat, within } from './input/index.js';
import type { Separator } from '../../domain/dump-lines.js';

export const INGEST_BODY_LIMIT = 64 * 1024 * 1024;
export const MAX_JSON_RECORDS = 10_000;
const tags = ['leaks'];
const NoContent = Type.Null({ description: 'Deleted.' });

/** A text/plain (or text/csv) body, still streaming: told apart from an NDJSON one by its type. */
class LineBody {
  constructor(
    readonly stream: Readable,
    readonly csv = false,
  ) {}
}

const SEPARATORS: readonly string[] = [':', ';', '|', ' ', '\t'];
const LINE_FORMATS = ['combo', 'stealer'];

/**
 * A text/plain body's items, read as `import-leaks` reads a file (openInput): lines that read as
 * neither format are a 400 naming the query parameter that says which.
 */
async function* lineItems(items: AsyncGenerator<InputItem[]>): AsyncGenerator<InputItem[]> {
  try {
    yield* items;
  } catch (err) {
    if (err instanceof UnknownLineFormat) throw new AppError('validation_error', 400, 'body: cannot tell combolist from stealer-log lines: pass ?format=combo or ?format=stealer', { errors: [{ field: 'body', message: 'not combolist or stealer-log lines' }] });
    throw err;
  }
}

export const leaksRoutes: FastifyPluginAsyncTypebox<{ leaks: LeaksService }> = async (app, { leaks }) => {
  // NDJSON bodies reach the handler as a stream, parsed line by line as they arrive.
  app.addContentTypeParser('application/x-ndjson', (_request, payload, done) => done(null, payload));
  // Combolist or stealer-log lines: read as they arrive, like NDJSON (see dumpLineItems).
  app.addContentTypeParser('text/plain', (_request, payload, done) => done(null, new LineBody(payload)));
  // CSV with a header row, read as `import-leaks` reads a .csv file (the console's uploads).
  app.addContentTypeParser('text/csv', (_request, payload, done) => done(null, new LineBody(payload, true)));

  app.get(
    '/leaks/search/',
    {
      schema: {
        tags,
        summary: 'Search the leak corpus',
        description:
          'At least one of q, email, domain, username, ip, phone, source is required (400 otherwise). Criteria combine with AND. `domain` includes subdomains unless `exact_domain=true`; `ip` takes an address or a CIDR range. The count is exact up to THREATMON_SEARCH_COUNT_LIMIT matches (10,000) or the page\'s end if further; past that it stops, `count_exact` is false and `count` is a lower bound (`exact_count=true` counts every match). A domain search without other filters always counts exactly, and so does full text when its words match few records; on PostgreSQL, full text that the statistics put at more than three times the limit is not counted: `count` is the estimate and `count_estimated` is true. Default order `-created_at`. While a bulk load of the corpus is being indexed (SQLite, `import-leaks --bulk`), a search with `q` answers 503 with `Retry-After`, never a count that leaves records out; every other criterion answers. With read replicas (THREATMON_DATABASE_READ_URLS) it reads a replica at most THREATMON_REPLICA_MAX_LAG behind, and the primary until a replica has replayed the caller organization\'s own writes to the corpus.',
        querystring: listQuerystring(leakSearch),
        response: { 200: CappedPageSchema(LeakRecordSchema), ...errorResponses(400, 401, 404, 503) },
      },
    },
    async (request, reply) => sendJsonPage(reply, envelope(request, await leaks.search(parseLeakSearch(request.query), principalOf(request).organization.id))),
  );

  app.get(
    '/leaks/records/:id/',
    { schema: { tags, summary: 'One leak record', description: 'One record of the corpus, as the search shows it: the password masked, never in plaintext.', params: IdParams, response: { 200: LeakRecordSchema, ...errorResponses(401, 404) } } },
    async (request, reply) => sendJson(reply, await leaks.getRecord(request.params.id, principalOf(request).organization.id)),
  );

  app.get(
    '/leaks/stats/',
    {
      schema: {
        tags,
        summary: 'Corpus statistics',
        description: 'Kept up to date on every ingestion and deletion, so they answer at once on a large corpus. `organization` holds your monitoring figures.',
        response: { 200: StatsSchema, ...errorResponses(401) },
      },
    },
    async (request) => leaks.stats(principalOf(request)),
  );

  app.get(
    '/leaks/passwords/range/:prefix/',
    {
      schema: {
        tags,
        summary: 'Pwned-passwords range (k-anonymity)',
        description:
          "The Have I Been Pwned range API's format: `text/plain`, one `SUFFIX:COUNT` line (CRLF-separated, in suffix order) per password SHA-1 in the corpus that starts with the 5 hex digits of the prefix; SUFFIX is the other 35 upper-case hex digits. Only the prefix leaves the client. Anything but exactly 5 hex digits: 400. As on Have I Been Pwned, the request header `Add-Padding: true` mixes random suffixes with a count of 0 into the answer, so that every answer holds 800 to 1,000 lines and its size tells nothing; a client ignores them (no password has a count of 0). `mode=ntlm` answers Have I Been Pwned's NTLM ranges (5 hex digits of the NTLM hash, 27-digit suffixes): threatmon computes the NTLM hash of each plaintext password it ingests (never storing the password), so it covers the records that came with one since migration 0025, not those given as a hash. `mode=sha1` is the default.",
        params: Type.Object({ prefix: Type.String({ description: 'First 5 hex digits of the SHA-1 (or NTLM hash) of the password.' }) }),
        querystring: Type.Object({ mode: Type.Optional(Type.String({ description: '`sha1` (the default) or `ntlm`.' })) }),
        headers: Type.Object({ 'add-padding': Type.Optional(Type.String({ description: '`true`: pad the answer to 800-1,000 lines with `SUFFIX:0` lines.' })) }),
        response: { 200: { description: 'SUFFIX:COUNT lines.', content: { 'text/plain': { schema: Type.String() } } }, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { prefix } = request.params;
      if (!/^[0-9A-Fa-f]{5}$/.test(prefix)) throw validation([{ field: 'prefix', message: 'must be exactly 5 hexadecimal characters' }]);
      const mode = request.query.mode?.toLowerCase() ?? 'sha1';
      if (mode !== 'sha1' && mode !== 'ntlm') throw validation([{ field: 'mode', message: 'must be sha1 or ntlm' }]);
      const body = await leaks.passwordRange(prefix, request.headers['add-padding']?.trim().toLowerCase() === 'true', mode);
      reply.type('text/plain; charset=utf-8');
      return reply.serializer((x: unknown) => x as string).send(body);
    },
  );

  // --- sources ---

  app.get(
    '/leaks/sources/',
    {
      schema: { tags, summary: 'Leak sources', description: 'Search looks in name and description.', querystring: listQuerystring(sourceListing), response: { 200: PageSchema(LeakSourceSchema), ...errorResponses(400, 401, 404) } },
    },
    async (request) => envelope(request, await leaks.listSources(parseList(sourceListing, request.query))),
  );

  app.post(
    '/leaks/sources/',
    {
      config: { etag: [201], staffOnly: true },
      schema: { tags, summary: 'Add a leak source (staff)', description: 'Staff only. The name is unique (409 `duplicate`); kind defaults to breach and every flag to false. Audited.', body: LeakSourceCreateSchema, response: { 201: LeakSourceSchema, ...errorResponses(400, 401, 403, 409, 415) } },
    },
    async (request, reply) => {
      const row = await leaks.createSource(actorOf(request), request.body);
      reply.code(201).header('etag', etagOf(row.version));
      return presentSource(row);
    },
  );

  app.get(
    '/leaks/sources/:id/',
    { config: { etag: [200] }, schema: { tags, summary: 'One leak source', description: 'One leak source, with its record count.', params: IdParams, response: { 200: LeakSourceSchema, 304: Type.Null({ description: 'Not modified.' }), ...errorResponses(401, 404) } } },
    async (request, reply) => {
      const row = await leaks.getSource(request.params.id);
      if (notModified(request, reply, row.version)) return reply;
      return presentSource(row);
    },
  );

  app.patch(
    '/leaks/sources/:id/',
    {
      config: { etag: [200], staffOnly: true },
      schema: { tags, summary: 'Update a leak source (staff)', description: 'Staff only; audited. A new name shows at once in the alerts that keep its records.', params: IdParams, body: LeakSourcePatchSchema, response: { 200: LeakSourceSchema, ...errorResponses(400, 401, 403, 404, 409, 412, 415) } },
    },
    async (request, reply) => {
      const row = await leaks.updateSource(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(row.version));
      return presentSource(row);
    },
  );

  app.delete(
    '/leaks/sources/:id/',
    {
      config: { staffOnly: true },
      schema: { tags, summary: 'Delete a leak source and its records (staff)', description: 'Records go in batches, each its own transaction, so the API keeps answering meanwhile. An ingest into the source still running is waited for (its open transaction) and what it stored is removed too; its next transaction answers 404.', params: IdParams, response: { 204: NoContent, ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      await leaks.deleteSource(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/leaks/sources/:id/records/',
    {
      config: { staffOnly: true, bodyCheckedByService: true },
      bodyLimit: INGEST_BODY_LIMIT,
      // Records are validated one by one by the ingestion, so one bad record rejects only itself.
      validatorCompiler: () => () => true,
      schema: {
        tags,
        summary: 'Ingest leak records (staff)',
        description:
          'Body: a JSON array of at most 10,000 records, an `application/x-ndjson` stream, `text/csv` with a header row naming record fields (as `import-leaks` reads a .csv file; each row\'s `index` counted from 0 after the header), or `text/plain` combolist or stealer-log lines (as `import-leaks` reads them: the format and separator detected unless `?format=` and `?separator=` say; each line numbered from 1 as its `index`; an unreadable line rejected with its reason), of up to 64 MiB per request, parsed as it arrives and stored in batches of 1,000, each in its own transaction. A stream past 64 MiB is answered 413 once every record on a line that ends within the limit is stored; the problem body says how far it got (`processed`, `accepted`, `duplicates`, `rejected`): send the rest in another request. A failure part-way (503) says the same, for the records committed before it. Record fields: email, username, domain, ip, phone, full_name, password or password_sha1, extra (object of strings, numbers, booleans), leaked_at. A record needs one of email, username, ip, phone. Plaintext passwords are never stored: only their SHA-1 and a mask. Idempotent: a record with the same fingerprint in the same source counts as a duplicate.',
        params: IdParams,
        querystring: Type.Object({
          format: Type.Optional(Type.Enum(['combo', 'stealer'], { type: 'string', description: 'text/plain only: the lines are a combolist or stealer-log lines (default: detected from the first 64 KiB).' })),
          separator: Type.Optional(Type.String({ description: 'text/plain only: the separator (`:`, `;`, `|`, space, tab; default: detected).' })),
        }),
        body: {
          content: {
            'application/json': { schema: Type.Array(LeakRecordInputSchema, { maxItems: MAX_JSON_RECORDS, description: 'The records.' }) },
            'application/x-ndjson': { schema: Type.String({ description: 'One record (a LeakRecordInput) per line.' }) },
            'text/plain': { schema: Type.String({ description: 'Combolist (`login:secret`) or stealer-log (`url:login:password`) lines.' }) },
            'text/csv': { schema: Type.String({ description: 'CSV: a header row of record field names (email, username, password, ...), then one record per row.' }) },
          },
        },
        response: { 200: IngestResultSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 503) },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      // The body validator is off for this route, and params with it: check the id here.
      if (!isUuid(id)) return reply.callNotFound();
      const body = request.body as unknown;
      const who = actorOf(request);
      if (Array.isArray(body)) {
        if (body.length > MAX_JSON_RECORDS) throw validation([{ field: 'body', message: `at most ${MAX_JSON_RECORDS} records per JSON array; stream more as application/x-ndjson` }]);
        return leaks.ingest(id, body.map((value, index) => ({ index, value })), who);
      }
      if (body instanceof LineBody && body.csv) return leaks.ingest(id, openInput(within(body.stream, INGEST_BODY_LIMIT, 'line'), { format: 'csv' }), who);
      if (body instanceof LineBody) {
        const { format, separator } = request.query as { format?: string; separator?: string };
        if (format !== undefined && format !== 'combo' && format !== 'stealer') throw badQuery('format', 'must be combo or stealer');
        if (separator !== undefined && !SEPARATORS.includes(separator)) throw badQuery('separator', 'must be one of ":", ";", "|", " " or a tab');
        return leaks.ingest(id, lineItems(openInput(within(body.stream, INGEST_BODY_LIMIT, 'line'), { format, among: LINE_FORMATS, separator: separator as Separator | undefined })), who);
      }
      if (body && typeof (body as Readable).pipe === 'function') {
        // ingest() looks the source up (404) before it reads the first line.
        return leaks.ingest(id, ndjsonItems(body as Readable, INGEST_BODY_LIMIT), who);
      }
      throw new AppError('validation_error', 400, 'body: must be a JSON array of records or an NDJSON stream', { errors: [{ field: 'body', message: 'must be a JSON array of records' }] });
    },
  );

  // --- saved searches ---

  app.get(
    '/leaks/saved-searches/',
    { schema: { tags, summary: 'Saved searches of your organization', description: 'Your organization\'s saved searches.', querystring: listQuerystring(savedSearchListing), response: { 200: PageSchema(SavedSearchSchema), ...errorResponses(400, 401, 404) } } },
    async (request) => envelope(request, await leaks.saved.listSaved(principalOf(request), parseList(savedSearchListing, request.query))),
  );

  const SavedCreate = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200, description: 'Name.' }), query: SavedQuerySchema }, { additionalProperties: false });
  const SavedPatch = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), query: Type.Optional(SavedQuerySchema) }, { additionalProperties: false });

  app.post(
    '/leaks/saved-searches/',
    {
      config: { etag: [201], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Save a search',
        description: 'Analyst or above. `query` takes the /leaks/search/ parameters and is validated like a search; unknown keys are refused.',
        body: SavedCreate,
        response: { 201: SavedSearchSchema, ...errorResponses(400, 401, 403, 415) },
      },
    },
    async (request, reply) => {
      const row = await leaks.saved.createSaved(actorOf(request), request.body as { name: string; query: Record<string, unknown> });
      reply.code(201).header('etag', etagOf(row.version));
      return presentSaved(row);
    },
  );

  app.get(
    '/leaks/saved-searches/:id/',
    { config: { etag: [200] }, schema: { tags, summary: 'One saved search', description: 'One saved search of your organization (another organization\'s: 404).', params: IdParams, response: { 200: SavedSearchSchema, 304: Type.Null({ description: 'Not modified.' }), ...errorResponses(401, 404) } } },
    async (request, reply) => {
      const row = await leaks.saved.getSaved(principalOf(request), request.params.id);
      if (notModified(request, reply, row.version)) return reply;
      return presentSaved(row);
    },
  );

  app.patch(
    '/leaks/saved-searches/:id/',
    {
      config: { etag: [200], minRole: 'analyst' },
      schema: { tags, summary: 'Update a saved search', description: 'Analyst or above: its name, or its query (checked as /leaks/search/ checks its parameters).', params: IdParams, body: SavedPatch, response: { 200: SavedSearchSchema, ...errorResponses(400, 401, 403, 404, 412, 415) } },
    },
    async (request, reply) => {
      const row = await leaks.saved.updateSaved(actorOf(request), request.params.id, request.body as { name?: string; query?: Record<string, unknown> }, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(row.version));
      return presentSaved(row);
    },
  );

  app.delete(
    '/leaks/saved-searches/:id/',
    {
      config: { minRole: 'admin' },
      schema: { tags, summary: 'Delete a saved search', description: 'Admin or above.', params: IdParams, response: { 204: NoContent, ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      await leaks.saved.deleteSaved(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/leaks/saved-searches/:id/results/',
    {
      schema: {
        tags,
        summary: 'Run a saved search',
        description: 'Its results, paginated like /leaks/search/ (a full-text one answers 503 with `Retry-After` while a bulk load is indexed); records last_run_at and last_result_count.',
        params: IdParams,
        querystring: Type.Object({
          page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number.' })),
          page_size: Type.Optional(Type.Integer({ minimum: 1, description: 'Records per page (clamped to 500).' })),
        }),
        response: { 200: CappedPageSchema(LeakRecordSchema), ...errorResponses(400, 401, 404, 503) },
      },
    },
    async (request, reply) => sendJsonPage(reply, envelope(request, await leaks.saved.runSaved(principalOf(request), request.params.id, request.query))),
  );
};
