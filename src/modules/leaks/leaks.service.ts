import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { DATA_CLASSES, type FullTextTerm, sha1Hex } from '../../domain/leak-record.js';
import { conflict, notFound, validation } from '../../http/errors.js';
import { normaliseDomain } from '../../domain/ioc.js';
import type { ListParams, ListResult } from '../../db/listing.js';
import { type AuditLog, diff } from '../audit/index.js';
import type { Principal } from '../identity/index.js';
import { markRecords } from '../indicator-marks.js';
import type { AppHookRegistry } from '../hooks.js';
import { LeakAccounts } from './leaks.accounts.js';
import { type BulkLoads, SqliteBulkLoads } from './leaks.bulk-load.js';
import { PgBulkLoads } from './leaks.bulk-load-pg.js';
import { counterDeltas, domainDeltas } from './leaks.counters.js';
import type { IngestItems } from './input/index.js';
import { type IngestOptions, type IngestReport, LeakIngest } from './leaks.ingest.js';
import { type HashMode, LeaksRepository, type SourceRow } from './leaks.repository.js';
import type { LeakSourceOut, SourceKind } from './leaks.schemas.js';
import { LeakSearches } from './leaks.search.repository.js';
import { SavedSearches } from './leaks.saved-searches.js';
import { sourceListing } from './leaks.lists.js';
import { presentSource } from './leaks.presenters.js';

export { BULK_LOAD_ALIVE_MS } from './leaks.bulk-load.js';
export type { IngestItem, IngestItems } from './input/index.js';
export { BATCH_SIZE, IngestCutOff, type IngestOptions, type IngestProgress, type IngestReport, MAX_BATCH_BYTES, MAX_REPORTED_REJECTIONS } from './leaks.ingest.js';

/** A source's domain as given (null or a domain, normalised), or 400. */
function breachedDomain(domain: string | null | undefined): string | null {
  if (domain === undefined || domain === null || domain === '') return null;
  const n = normaliseDomain(domain);
  if (!n.ok || !n.value.includes('.')) throw validation([{ field: 'domain', message: n.ok ? 'must be a domain of two labels or more' : n.error }]);
  return n.value;
}

/** See LeaksService.rowsMadeByReader. */
export interface RowsMade {
  at: string;
  breachDate: string | null;
  slotted: boolean;
}

/**
 * The leak corpus, one service for routes, the CLI and other modules: sources and statistics here,
 * and the parts it is made of, each in its own file: ingestion (leaks.ingest.ts), bulk loads
 * (leaks.bulk-load.ts), search (leaks.search.repository.ts), saved searches
 * (leaks.saved-searches.ts); every query in a repository.
 */
export class LeaksService {
  private readonly repo: LeaksRepository;
  /** Bulk loads of the corpus, as the database in use runs them (leaks.bulk-load.ts, leaks.bulk-load-pg.ts). */
  readonly bulk: BulkLoads;
  private readonly ingester: LeakIngest;
  private readonly searches: LeakSearches;
  /** Saved searches: named queries that run again (leaks.saved-searches.ts). */
  readonly saved: SavedSearches;
  /** The corpus as accounts and the sources they are in (the Have I Been Pwned surface reads it). */
  readonly accounts: LeakAccounts;

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'metrics' | 'config'>,
    private readonly audit: AuditLog,
    private readonly hooks: AppHookRegistry,
  ) {
    this.repo = new LeaksRepository(deps.database, deps.newId);
    this.bulk = deps.database.dialect === 'postgres' ? new PgBulkLoads(deps) : new SqliteBulkLoads(deps);
    this.ingester = new LeakIngest(deps, this.repo, audit, hooks, { get: (id) => this.getSource(id) }, this.bulk);
    this.searches = new LeakSearches(deps.database, this.repo, deps.config.searchCountLimit);
    this.saved = new SavedSearches(deps, this.repo, { search: (params, orgId) => this.search(params, orgId) }, audit);
    this.accounts = new LeakAccounts(() => this.db);
  }

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
  }

  // --- sources ---

  listSources(params: ListParams): Promise<ListResult<LeakSourceOut>> {
    const qb = sourceListing.filter(this.repo.selectSources(), params, { dialect: this.deps.database.dialect });
    return sourceListing.page(qb, params, presentSource);
  }

  async getSource(id: string, db: Kysely<DB> = this.db): Promise<SourceRow> {
    const row = await this.repo.findSource(db, id);
    if (!row) throw notFound('No such leak source.');
    return row;
  }

  /**
   * PostgreSQL: what an importer's reader thread needs to make a source's records into COPY rows
   * itself (IngestItem.encoded): when they are stored, the source's breach date (the month counted
   * for a record without its own), whether they are slotted over corpus shards. Null on SQLite,
   * which binds each record's values.
   */
  async rowsMadeByReader(sourceId: string): Promise<RowsMade | null> {
    const { database } = this.deps;
    if (!database.copyFrom) return null;
    const source = await this.getSource(sourceId);
    return { at: this.deps.clock().toISOString(), breachDate: source.breach_date, slotted: database.corpusShards !== undefined };
  }

  findSourceByName(name: string) {
    return this.repo.findSourceByName(this.db, name);
  }

  async createSource(
    actor: { p: Principal | null; ip: string | null },
    body: {
      name: string;
      description?: string;
      domain?: string | null;
      breach_date?: string | null;
      discovered_at?: string | null;
      data_classes?: string[];
      kind?: SourceKind;
      is_verified?: boolean;
      is_fabricated?: boolean;
      is_sensitive?: boolean;
      is_spam_list?: boolean;
    },
  ): Promise<SourceRow> {
    return this.db.transaction().execute(async (trx) => {
      if (await this.repo.sourceNameTaken(trx, body.name)) {
        throw conflict(`A leak source named "${body.name}" already exists.`, 'duplicate');
      }
      const at = this.now();
      const row = {
        id: this.deps.newId(),
        name: body.name,
        description: body.description ?? '',
        domain: breachedDomain(body.domain),
        breach_date: body.breach_date ?? null,
        discovered_at: body.discovered_at ?? null,
        data_classes: JSON.stringify(body.data_classes ?? []),
        kind: body.kind ?? 'breach',
        is_verified: body.is_verified ?? false,
        is_fabricated: body.is_fabricated ?? false,
        is_sensitive: body.is_sensitive ?? false,
        is_spam_list: body.is_spam_list ?? false,
        created_at: at,
        updated_at: at,
      };
      await this.repo.insertSource(trx, row);
      await this.audit.recordAs(trx, actor, { action: 'leak_source.created', targetType: 'leak_source', targetId: row.id, changes: { name: row.name, kind: row.kind } });
      return this.getSource(row.id, trx);
    });
  }

  async updateSource(actor: { p: Principal | null; ip: string | null }, id: string, patch: Record<string, unknown>, assertVersion: (v: number) => void = () => undefined) {
    const row = await this.db.transaction().execute(async (trx) => {
      const current = await this.getSource(id, trx);
      assertVersion(current.version);
      if (patch.domain !== undefined) patch = { ...patch, domain: breachedDomain(patch.domain as string | null) };
      const changes = diff(presentSource(current), patch);
      if (Object.keys(changes).length === 0) return current;
      if (changes.name && (await this.repo.sourceNameTaken(trx, String(patch.name)))) {
        throw conflict(`A leak source named "${String(patch.name)}" already exists.`, 'duplicate');
      }
      const set: Record<string, unknown> = { ...patch, updated_at: this.now() };
      if (patch.data_classes !== undefined) set.data_classes = JSON.stringify(patch.data_classes);
      await this.repo.updateSource(trx, id, set);
      if (changes.name) for (const hook of this.hooks.of('leaks.sourceRenamed')) await hook(trx, { id, name: String(patch.name) });
      await this.audit.recordAs(trx, actor, { action: 'leak_source.updated', targetType: 'leak_source', targetId: id, changes });
      return this.getSource(id, trx);
    });
    await this.wrote(actor.p);
    return row;
  }

  /** Removes a source and its records in batches (each its own transaction, counters kept right), yielding between them. */
  async deleteSource(actor: { p: Principal; ip: string }, id: string) {
    const source = await this.getSource(id);
    const removeSome = async (trx: Kysely<DB>) => {
      const rows = await this.repo.sourceRecords(trx, id, 2000);
      if (rows.length === 0) return true;
      await this.repo.deleteRecords(trx, rows.map((r) => r.id));
      await this.repo.bumpCounters(trx, counterDeltas(rows, source.breach_date, -1));
      await this.repo.bumpCounters(trx, domainDeltas(rows, -1), 'leak_domain_counts');
      return false;
    };
    for (;;) {
      if (await this.db.transaction().execute(removeSome)) break;
      await yieldToEventLoop();
    }
    await this.db.transaction().execute(async (trx) => {
      // The source row held first: an ingest holding it (LeaksRepository.holdSource) commits
      // before this goes on, and what it stored is removed here, counters with it (the foreign
      // key's cascade would not count them; a bulk load sets it aside).
      await this.repo.holdSource(trx, id, 'update');
      while (!(await removeSome(trx)));
      await this.repo.deleteSource(trx, id);
      await this.audit.recordAs(trx, actor, { action: 'leak_source.deleted', targetType: 'leak_source', targetId: id, changes: { name: source.name, record_count: source.record_count } });
    });
    await this.wrote(actor.p);
  }

  // --- ingestion and bulk loads ---

  /** See LeakIngest.ingest. */
  async ingest(sourceId: string, items: IngestItems, actor: { p: Principal | null; ip: string | null }, options: IngestOptions = {}): Promise<IngestReport> {
    try {
      return await this.ingester.ingest(sourceId, items, actor, options);
    } finally {
      await this.wrote(actor.p);
    }
  }

  afterLargeLoad(): Promise<void> {
    return this.repo.afterLargeLoad();
  }

  // --- search, records, statistics ---

  /** A search, for `orgId` (on a read replica when there is one that has that organization's own writes: see onReplica). */
  async search(params: ListParams, orgId?: string): Promise<ListResult<string>> {
    const page = await this.onReplica(orgId, () => this.searches.search(params));
    return orgId === undefined ? page : { ...page, results: await markRecords(this.hooks, this.db, orgId, page.results) };
  }

  /**
   * Per organization, the primary's log position after its last write to the corpus (an ingest, a
   * source changed) in this process: its reads go to a replica that has replayed it, else to the primary.
   */
  private readonly written = new Map<string, bigint>();

  /** Runs `read` on a read replica (see ReadReplicas.read), one that has `orgId`'s own writes; on the primary when there are none. */
  private onReplica<T>(orgId: string | undefined, read: () => Promise<T>): Promise<T> {
    const replicas = this.deps.database.replicas;
    return replicas ? replicas.read(read, orgId === undefined ? 0n : this.written.get(orgId)) : read();
  }

  /** After a write to the corpus by `p`'s organization (see written). */
  private async wrote(p: Principal | null | undefined): Promise<void> {
    const replicas = this.deps.database.replicas;
    if (p && replicas) this.written.set(p.organization.id, await replicas.primaryLsn());
  }

  expandPrefixes(terms: FullTextTerm[]): Promise<FullTextTerm[]> {
    return this.searches.expandPrefixes(terms);
  }

  /** One record's JSON text. */
  async getRecord(id: string, orgId?: string): Promise<string> {
    const json = await this.searches.recordJson(id);
    if (json === undefined) throw notFound('No such leak record.');
    return orgId === undefined ? json : (await markRecords(this.hooks, this.db, orgId, [json]))[0]!;
  }

  /** Have I Been Pwned's range answer (see LeaksRepository.passwordRange). */
  passwordRange(prefix: string, pad = false, mode: HashMode = 'sha1'): Promise<string> {
    return this.repo.passwordRange(prefix, pad, mode);
  }

  /** For the password policy: whether this password's SHA-1 is in the corpus. */
  isBreached(password: string, db: Kysely<DB> = this.db): Promise<boolean> {
    return this.repo.hasPasswordSha1(db, sha1Hex(password));
  }

  async stats(p: Principal) {
    const { counters, sources } = await this.onReplica(p.organization.id, async () => ({ counters: await this.repo.readCounters(), sources: await this.repo.sourceFigures() }));
    const { total: totalSources, top, latest } = sources;
    const now = this.deps.clock();
    const months: string[] = [];
    for (let i = 23; i >= 0; i--) {
      const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
      months.push(d.toISOString().slice(0, 7));
    }
    const orgFigures = this.hooks.of('leaks.organizationFigures')[0];
    const org = orgFigures ? await orgFigures(this.db, p.organization.id) : { monitors: 0, alerts_open: 0, alerts_last_30_days: 0 };
    return {
      total_records: counters.get('total') ?? 0,
      total_sources: totalSources,
      records_with_password: counters.get('with_password') ?? 0,
      by_data_class: Object.fromEntries(DATA_CLASSES.map((c) => [c, counters.get(`class:${c}`) ?? 0])),
      top_sources: top.map((s) => ({ id: s.id, name: s.name, record_count: Number(s.record_count) })),
      by_month: months.map((month) => ({ month, records: counters.get(`month:${month}`) ?? 0 })),
      latest_source: latest ?? null,
      organization: org,
    };
  }
}
