/**
 * The floor under threatmon's hot path: a bare node:http server that answers the benchmarked reads
 * with threatmon's own SQL (compiled once from its repositories and listings), the same JSON text
 * and the same response headers, and nothing else: no framework, authentication, rate limit, query
 * validation or access log. What it reaches is what this machine allows the stack before any of
 * threatmon's own work; bench/run.ts loads it beside threatmon (scenarios ceiling and monitoring).
 *
 *   node --import tsx bench/floor-server.ts   # env: THREATMON_DATABASE_URL, FLOOR_PORT, FLOOR_ORG, FLOOR_HEADERS (JSON)
 *
 * Routes, as threatmon's under /api/v1: GET /incidents/<uuid>/,
 * GET /incidents/?status=open&severity=high&page_size=50, GET /monitoring/alerts/?status=new&severity=high;
 * GET /leaks/search/?<criteria> (the plan and statements of threatmon's LeakSearches, page 1);
 * and as its Have I Been Pwned surface: GET /hibp/api/v3/breachedaccount/<account> (names only).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { CompiledQuery, type Kysely, type SelectQueryBuilder } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/database.js';
import { LIST_COUNT, type Listing } from '../src/db/listing.js';
import type { DB } from '../src/db/schema.js';
import { INCIDENT_JSON, IncidentsRepository } from '../src/modules/incidents/incidents.repository.js';
import { incidentListing } from '../src/modules/incidents/incidents.lists.js';
import { MonitoringRepository } from '../src/modules/monitoring/monitoring.repository.js';
import { LeakAccounts } from '../src/modules/leaks/leaks.accounts.js';
import { leakSearch } from '../src/modules/leaks/leaks.lists.js';
import { LeaksRepository } from '../src/modules/leaks/leaks.repository.js';
import { LeakSearches } from '../src/modules/leaks/leaks.search.repository.js';
import { alertListing } from '../src/modules/monitoring/monitoring.lists.js';
import { parseList } from '../src/http/list-query.js';

const config = loadConfig(process.env);
const database = createDatabase(config);
const db = database.db;
const org = process.env.FLOOR_ORG ?? '';
type AnyQuery = SelectQueryBuilder<any, any, any>;
const headers = JSON.parse(process.env.FLOOR_HEADERS ?? '{}') as Record<string, string>;

/** A page as threatmon reads it: its listing's filters and order, 50 rows, the count from the counters in each row. */
function pageSql(qb: AnyQuery, listing: Listing, query: Record<string, string>, count: AnyQuery) {
  const params = parseList(listing, { ...query, page_size: 50 });
  return listing.pageQuery(listing.filter(qb, params, { dialect: database.dialect }), params, count).compile();
}

const incidents = new IncidentsRepository(database.dialect);
const monitoring = new MonitoringRepository(database.dialect);
const queries = {
  incident: db.selectFrom('incidents').select(['version', INCIDENT_JSON[database.dialect].as('json')]).where('organization_id', '=', org).where('id', '=', '$id').compile(),
  incidents: pageSql(incidents.selectIncidentJson(db, org), incidentListing, { status: 'open', severity: 'high' }, incidents.countQuery(db, org, ['open'], ['high'])),
  alerts: pageSql(monitoring.selectAlertJson(db, org), alertListing, { status: 'new', severity: 'high' }, monitoring.alertCountQuery(db, org, { statuses: ['new'], severities: ['high'] })),
};

/** Runs a compiled query with its parameters: better-sqlite3 directly, or pg through Kysely's pool (named statements). */
const run =
  database.sqlite !== undefined
    ? (() => {
        const statements = new Map<string, ReturnType<NonNullable<typeof database.sqlite>['prepare']>>();
        return async (q: CompiledQuery, params: readonly unknown[]) => {
          let st = statements.get(q.sql);
          if (!st) statements.set(q.sql, (st = (database.sqlite as NonNullable<typeof database.sqlite>).prepare(q.sql)));
          return st.all(params as unknown[]) as Array<Record<string, unknown>>;
        };
      })()
    : async (q: CompiledQuery, params: readonly unknown[]) => (await (db as Kysely<DB>).executeQuery<Record<string, unknown>>(CompiledQuery.raw(q.sql, [...params]))).rows;

/** The envelope of page 1 as threatmon writes it (pages of 50), its link to page 2 included. */
const envelope = (req: http.IncomingMessage, count: number, results: unknown[], countExact?: boolean) => {
  const next = count > 50 || countExact === false ? JSON.stringify(`http://${req.headers.host}${req.url}&page=2`) : 'null';
  const exact = countExact === undefined ? '' : `"count_exact":${countExact},`;
  return `{"count":${count},${exact}"next":${next},"previous":null,"results":[${results.join(',')}]}`;
};
/** A listing's page: the count from the counters in each row, the rows' JSON. */
const listPage = (req: http.IncomingMessage, rows: Array<Record<string, unknown>>) => envelope(req, Number(rows[0]?.[LIST_COUNT] ?? 0), rows.map((r) => r.json));

const accounts = new LeakAccounts(() => db);
const searches = new LeakSearches(database, new LeaksRepository(database, randomUUID), config.searchCountLimit);
const SEARCH = '/api/v1/leaks/search/?';
const BREACHED = '/hibp/api/v3/breachedaccount/';

// A query that fails (a pool's connect timeout under a slow search) answers 503, as threatmon's
// would, instead of ending the process with an unhandled rejection mid-run.
const server = http.createServer((req, res) => {
  answer(req, res).catch((err: unknown) => {
    console.error(`floor server: ${req.url}: ${(err as Error).message}`);
    if (!res.headersSent) res.writeHead(503).end();
  });
});

async function answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = req.url ?? '';
  let body: string | undefined;
  let etag: string | undefined;
  if (url.startsWith(BREACHED)) {
    const q = accounts.sourcesQuery(decodeURIComponent(url.slice(BREACHED.length).split('?')[0] ?? '')).compile();
    const rows = await run(q, q.parameters);
    if (rows.length) body = JSON.stringify(rows.map((r) => ({ Name: r.name })));
  } else if (url.startsWith(SEARCH)) {
    const found = await searches.search(parseList(leakSearch, Object.fromEntries(new URLSearchParams(url.slice(SEARCH.length)))));
    body = envelope(req, found.count, found.results, found.countExact);
  } else if (url.startsWith('/api/v1/incidents/?')) body = listPage(req, await run(queries.incidents, queries.incidents.parameters));
  else if (url.startsWith('/api/v1/monitoring/alerts/?')) body = listPage(req, await run(queries.alerts, queries.alerts.parameters));
  else if (url.startsWith('/api/v1/incidents/')) {
    const id = url.slice('/api/v1/incidents/'.length, -1);
    const [row] = await run(queries.incident, queries.incident.parameters.map((p) => (p === '$id' ? id : p)));
    if (row) {
      body = String(row.json);
      etag = `"${String(row.version)}"`;
    }
  }
  if (body === undefined) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { ...headers, 'x-request-id': randomUUID(), ...(etag && { etag }), 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
server.listen(Number(process.env.FLOOR_PORT), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => {
  server.close();
  void database.close();
});
