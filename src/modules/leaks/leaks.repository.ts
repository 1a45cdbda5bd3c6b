import { type CorpusShards, idInSlot, MOVE_LOCK, recordSlot } from '../../db/corpus-shards.js';
import { randomBytes, randomInt } from 'node:crypto';
import { type Insertable, type Kysely, type QueryCreator, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import { pgIso } from '../../db/json.js';
import type { DB } from '../../db/schema.js';
import type { LeakRecordsTable, LeakSourcesTable } from './leaks.tables.js';
import { type NormalisedRecord, recordKey } from '../../domain/leak-record.js';
import { copyStraight } from '../../db/copy-straight.js';
import { copyChunks, eachKeyOnce, RECORD_COLUMNS, recordValues } from './leaks.record-rows.js';

export type SourceRow = Selectable<LeakSourcesTable>;
export type SavedSearchRow = Selectable<DB['saved_searches']>;
/** A record as found by a search: its id and its JSON text (see RECORD_JSON). */
export type RecordRow = { id: string; json: string };


/**
 * A leak record as the JSON text of LeakRecordSchema, built by the database, so that a page of
 * records reaches the response without being decoded and encoded again (the search's largest cost).
 * Timestamps as toISOString() writes them; test/modules/leak-record-json.test.ts holds the text to
 * the schema, field by field.
 */
/** PostgreSQL: the record as a json value, for a document that nests it (see RECORD_JSON). */
/** `sourceName`: the source's name, as a column named name. */
const pgRecordJson = (sourceName: RawBuilder<string | null>) => sql<string>`(select row_to_json(o) from (select leak_records.id,
      (select row_to_json(s) from (select leak_records.source_id as id, ${sourceName}) as s) as source,
      leak_records.email, leak_records.username, leak_records.domain, leak_records.ip, leak_records.phone,
      leak_records.full_name, leak_records.password_masked, left(leak_records.password_sha1, 5) as password_sha1_prefix,
      leak_records.password_sha1 is not null as has_password, leak_records.severity, leak_records.extra::json as extra,
      ${pgIso('leak_records.leaked_at')} as leaked_at, ${pgIso('leak_records.created_at')} as created_at) as o)`;
export const RECORD_JSON_PG_VALUE = pgRecordJson(sql`leak_sources.name`);
/**
 * A shard's record (its source is in the main database): the source's name null, written in after
 * (see withSourceName); the same text otherwise.
 */
export const SHARD_RECORD_JSON = sql<string>`${pgRecordJson(sql`null::text as name`)}::text`;

export const RECORD_JSON: Record<Dialect, RawBuilder<string>> = {
  postgres: sql<string>`${RECORD_JSON_PG_VALUE}::text`,
  sqlite: sql<string>`json_object('id', leak_records.id,
    'source', json_object('id', leak_records.source_id, 'name', leak_sources.name),
    'email', leak_records.email, 'username', leak_records.username, 'domain', leak_records.domain,
    'ip', leak_records.ip, 'phone', leak_records.phone, 'full_name', leak_records.full_name,
    'password_masked', leak_records.password_masked, 'password_sha1_prefix', substr(leak_records.password_sha1, 1, 5),
    'has_password', json(case when leak_records.password_sha1 is null then 'false' else 'true' end), 'severity', leak_records.severity,
    'extra', json(leak_records.extra), 'leaked_at', leak_records.leaked_at, 'created_at', leak_records.created_at)`,
};

/** Most words an ingesting process remembers as being in leak_words already (about 10 MB). */
const MAX_KNOWN_WORDS = 200_000;

/** Batches of a source written through the temporary table after a direct COPY met a stored key (see copyRecords). */
export const DIRECT_COPY_PAUSE = 16;

/** PostgreSQL: a batch of this many records or more is written with COPY (see copyRecords); fewer, with INSERTs. */
export const COPY_FROM_RECORDS = 100;

/** The hash a password range is of: SHA-1 (the default) or NTLM, as Have I Been Pwned's `mode` says. */
export type HashMode = 'sha1' | 'ntlm';

/** A padded range answer (Add-Padding: true) holds this many lines at least and at most, as Have I Been Pwned's does. */
const PADDED_MIN = 800;
const PADDED_MAX = 1000;

/** Every query of the leak corpus but the search's (leaks.search.repository.ts) and a bulk load's (leaks.bulk-load.repository.ts). */
export class LeaksRepository {
  private insertStatement?: import('better-sqlite3').Statement;
  private readonly counterStatements = new Map<string, import('better-sqlite3').Statement>();

  constructor(
    private readonly database: Database,
    private readonly newId: () => string,
  ) {}

  private get db() {
    return this.database.db;
  }

  // --- sources ---

  selectSources() {
    return this.db.selectFrom('leak_sources').selectAll();
  }

  findSource(db: Kysely<DB>, id: string) {
    return db.selectFrom('leak_sources').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findSourceByName(db: Kysely<DB>, name: string) {
    return db.selectFrom('leak_sources').selectAll().where('name', '=', name).executeTakeFirst();
  }

  async sourceNameTaken(db: Kysely<DB>, name: string): Promise<boolean> {
    return Boolean(await db.selectFrom('leak_sources').select('id').where('name', '=', name).executeTakeFirst());
  }

  async insertSource(db: Kysely<DB>, row: Insertable<LeakSourcesTable>): Promise<void> {
    await db.insertInto('leak_sources').values(row).execute();
  }

  /** Changes a source and bumps its version (the ETag). */
  async updateSource(db: Kysely<DB>, id: string, set: Record<string, unknown>): Promise<void> {
    await db
      .updateTable('leak_sources')
      .set((eb) => ({ ...(set as object), version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async deleteSource(db: Kysely<DB>, id: string): Promise<void> {
    await db.deleteFrom('leak_sources').where('id', '=', id).execute();
  }

  async addToRecordCount(db: Kysely<DB>, sourceId: string, n: number): Promise<void> {
    await db
      .updateTable('leak_sources')
      .set((eb) => ({ record_count: eb('record_count', '+', n) }))
      .where('id', '=', sourceId)
      .execute();
  }

  /** Up to `limit` records of a source, with what their counters are made of: the next to delete. */
  sourceRecords(db: Kysely<DB>, sourceId: string, limit: number) {
    return db
      .selectFrom('leak_records')
      .select(['id', 'email', 'username', 'domain_rev', 'ip', 'phone', 'full_name', 'password_sha1', 'extra', 'leaked_at'])
      .where('source_id', '=', sourceId)
      .limit(limit)
      .execute();
  }

  async deleteRecords(db: Kysely<DB>, ids: string[]): Promise<void> {
    // Shards: no foreign key removes the records' alerts with them (see corpus-shards.ts).
    if (this.database.corpusShards) {
      // A slot being copied to another shard would keep a row deleted meanwhile: deletions wait for the move.
      await sql`select pg_advisory_xact_lock_shared(${MOVE_LOCK})`.execute(db);
      await db.deleteFrom('monitor_alerts').where('leak_record_id', 'in', ids).execute();
    }
    await db.deleteFrom('leak_records').where('id', 'in', ids).execute();
  }

  // --- records and counters ---

  /**
   * Inserts records of a source, skipping those already stored (same key); returns the new ones,
   * with their ids, in order.
   */
  async insertRecords(
    trx: Kysely<DB>,
    sourceId: string,
    records: NormalisedRecord[],
    at: string,
    /** PostgreSQL: the words the open transaction has put in leak_words so far; those of this batch are added. */
    words: Set<string>,
    /** The batch's search words as its producer gave them (see IngestOptions.wordsGiven), instead of its records' own. */
    givenWords?: ReadonlyArray<readonly string[]>,
  ): Promise<{ inserted: NormalisedRecord[]; insertedIds: string[] }> {
    const inserted: NormalisedRecord[] = [];
    const insertedIds: string[] = [];
    const raw = this.database.sqlite;
    if (raw) {
      // SQLite: one prepared statement run per row inside the open transaction is several times
      // faster than building multi-row inserts; `changes` says whether the row was new. The
      // values are bound straight from the record, in RECORD_COLUMNS order, with no row object.
      const insert = (this.insertStatement ??= raw.prepare(
        `insert into leak_records (${RECORD_COLUMNS.join(', ')}) values (${RECORD_COLUMNS.map(() => '?').join(', ')}) on conflict (fingerprint) do nothing`,
      ));
      for (const r of records) {
        const id = this.newId();
        if (insert.run(recordValues(r, id, sourceId, at)).changes > 0) {
          inserted.push(r);
          insertedIds.push(id);
        }
      }
    } else {
      // Ids handed out in key order, the order rows go in (insertRows, copyRecords): the primary
      // key then grows at its right edge, its pages filled, instead of splitting at random (70% full).
      const keys = records.map((r) => r.key ?? recordKey(sourceId, r.fingerprint));
      const ids = new Array<string>(records.length);
      const inKeyOrder = keys.map((_, i) => i).sort((x, y) => Buffer.compare(keys[x] as Uint8Array, keys[y] as Uint8Array));
      for (const i of inKeyOrder) ids[i] = this.newId();
      const shards = this.database.corpusShards;
      // Spread over shards: each id names its record's slot (see corpus-shards.ts).
      if (shards) records.forEach((r, i) => (ids[i] = idInSlot(ids[i] as string, recordSlot(r, keys[i] as Uint8Array))));
      const returned = shards
        ? await this.shardRecords(shards, trx, records, ids, keys, inKeyOrder, sourceId, at)
        : records.length >= COPY_FROM_RECORDS && this.database.copyFrom
          ? await this.copyRecords(trx, records, ids, keys, inKeyOrder, sourceId, at)
          : await this.insertRows(trx, records, ids, keys, sourceId, at);
      const returnedIds = new Set(returned);
      records.forEach((r, i) => {
        const id = ids[i] as string;
        if (returnedIds.has(id)) {
          inserted.push(r);
          insertedIds.push(id);
        }
      });
      // Given words are added whatever the batch's records turned out to be: some of them may be
      // of the records of the next batch (see IngestItem.words).
      if (givenWords) await this.addWords(trx, givenWords, words);
      else if (inserted.length) await this.addWords(trx, inserted.map((r) => r.search_text.split(' ')), words);
    }
    return { inserted, insertedIds };
  }

  /**
   * Shards: each shard's records COPYed straight to it, all shards at once, in the shards' part of
   * `trx` (committed with it, see ShardBatch); as on one server (see copyRecords), into each shard's
   * leak_records itself unless a key was met again lately. Returns the ids of the rows that were new.
   */
  private async shardRecords(shards: CorpusShards, trx: Kysely<DB>, records: NormalisedRecord[], ids: string[], keys: Uint8Array[], inKeyOrder: number[], sourceId: string, at: string): Promise<string[]> {
    const batch = await shards.batchFor(trx);
    const direct = this.directCopy(sourceId);
    const byShard = shards.byShard(direct ? eachKeyOnce(keys, inKeyOrder) : inKeyOrder, (i) => ids[i] as string);
    const pick = <T>(list: T[], idx: number[]) => idx.map((i) => list[i] as T);
    let metStoredKey = false;
    // Every shard's part settled before a failure is thrown: the rollback then finds each of them done.
    const parts = await Promise.allSettled(
      [...byShard].map(async ([position, idx]) => {
        const [shardRecords, shardIds, shardKeys] = [pick(records, idx), pick(ids, idx), pick(keys, idx)];
        // Made as they are sent (again if a stored key sends them through the staging table), not held.
        const returned = await batch.insert(position, RECORD_COLUMNS, () => copyChunks(shardRecords, shardIds, shardKeys, sourceId, at), direct);
        if (direct && returned) metStoredKey = true;
        return returned ?? shardIds;
      }),
    );
    const failed = parts.find((p): p is PromiseRejectedResult => p.status === 'rejected');
    if (failed) throw failed.reason;
    if (metStoredKey) this.directCopyPaused.set(sourceId, DIRECT_COPY_PAUSE);
    return parts.flatMap((p) => (p.status === 'fulfilled' ? p.value : []));
  }

  /** PostgreSQL, a small batch: multi-row INSERTs. Returns the ids of the rows that were new. */
  private async insertRows(trx: Kysely<DB>, records: NormalisedRecord[], ids: string[], keys: Uint8Array[], sourceId: string, at: string): Promise<string[]> {
    const rows = records.map((r, i) => Object.fromEntries(recordValues(r, ids[i] as string, sourceId, at, keys[i]).map((v, c) => [RECORD_COLUMNS[c], v])) as Insertable<LeakRecordsTable>);
    // In key order: concurrent ingests of the same records then lock their keys in the same
    // order, and wait for one another instead of deadlocking (as the counters and words do).
    rows.sort((a, b) => Buffer.compare(a.fingerprint as Uint8Array, b.fingerprint as Uint8Array));
    const returned: string[] = [];
    for (let i = 0; i < rows.length; i += 500) {
      const page = await trx
        .insertInto('leak_records')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.column('fingerprint').doNothing())
        .returning('id')
        .execute();
      for (const { id } of page) returned.push(id);
    }
    return returned;
  }

  /**
   * PostgreSQL, a batch of COPY_FROM_RECORDS or more. First tried: COPY straight into leak_records,
   * the batch's repeated keys left out (the first kept), in key order (see insertRows), inside a
   * savepoint: a key already stored fails it (unique_violation), and nothing of it stays. Then, and
   * for the next DIRECT_COPY_PAUSE batches of that source (a file imported again repeats every
   * key): COPY into a temporary table of this connection (unlogged, no indexes), then one
   * INSERT ... SELECT of it in key order that skips the keys already stored, the same rule as a
   * row-by-row insert. The first writes each row once and sorts nothing: a bulk load of new
   * records spent half its database time in the second. Returns the ids of the rows that were new.
   */
  private async copyRecords(trx: Kysely<DB>, records: NormalisedRecord[], ids: string[], keys: Uint8Array[], inKeyOrder: number[], sourceId: string, at: string): Promise<string[]> {
    const copyFrom = this.database.copyFrom as NonNullable<Database['copyFrom']>;
    if (this.directCopy(sourceId)) {
      const once = eachKeyOnce(keys, inKeyOrder);
      const pick = <T>(list: T[]) => once.map((i) => list[i] as T);
      const straight = () => copyFrom(trx, `copy leak_records (${RECORD_COLUMNS.join(', ')}) from stdin`, copyChunks(pick(records), pick(ids), pick(keys), sourceId, at));
      if (await copyStraight((statement) => sql.raw(statement).execute(trx), straight)) return pick(ids);
      this.directCopyPaused.set(sourceId, DIRECT_COPY_PAUSE);
    }
    const columns = sql.join(RECORD_COLUMNS.map((c) => sql.ref(c)));
    await sql`create temporary table if not exists leak_records_incoming as select ${columns} from leak_records with no data`.execute(trx);
    await copyFrom(trx, `copy leak_records_incoming (${RECORD_COLUMNS.join(', ')}) from stdin`, copyChunks(records, ids, keys, sourceId, at));
    const { rows } = await sql<{ id: string }>`insert into leak_records (${columns}) select ${columns} from leak_records_incoming order by fingerprint, id
      on conflict (fingerprint) do nothing returning id`.execute(trx);
    // Emptied by TRUNCATE, not DELETE: no vacuum visits a temporary table, so deleted rows would
    // stay in it and every later batch would read past them.
    await sql`truncate leak_records_incoming`.execute(trx);
    return rows.map((r) => r.id);
  }

  /** Adds `deltas` to the corpus counters, or (domains) to the per-domain counts. */
  async bumpCounters(trx: Kysely<DB>, deltas: Map<string, number>, table: 'leak_counters' | 'leak_domain_counts' = 'leak_counters') {
    const raw = this.database.sqlite;
    if (raw) {
      let upsert = this.counterStatements.get(table);
      if (!upsert) {
        upsert = raw.prepare(`insert into ${table} (key, n) values (?, ?) on conflict (key) do update set n = ${table}.n + excluded.n`);
        this.counterStatements.set(table, upsert);
      }
      for (const [key, n] of deltas) if (n !== 0) upsert.run(key, n);
      return;
    }
    // PostgreSQL: one statement per 1,000 keys (a batch can touch hundreds of domains), keys in
    // order so that concurrent ingests lock counter rows in the same order.
    const values = [...deltas].filter(([, n]) => n !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, n]) => ({ key, n }));
    for (let i = 0; i < values.length; i += 1000) {
      await trx
        .insertInto(table)
        .values(values.slice(i, i + 1000))
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ n: eb(`${table}.n`, '+', eb.ref('excluded.n')) })))
        .execute();
    }
  }

  /**
   * PostgreSQL: the full-text words of new records (their search texts' words, in lists) into
   * leak_words (see migration 0008), each tokenised by PostgreSQL itself, so that the words are exactly the lexemes
   * of the records' tsvectors. In order, so that concurrent ingests lock them in the same order.
   * Words this process saw committed (wordsCommitted), or this transaction already wrote, are left
   * out: most words of a batch (names, short numbers) are in the vocabulary already.
   */
  async addWords(trx: Kysely<DB>, lists: ReadonlyArray<readonly string[]>, written: Set<string>) {
    const words = new Set<string>();
    for (const list of lists) for (const w of list) if (w && !this.committedWords.has(w) && !written.has(w)) words.add(w);
    if (words.size === 0) return;
    await sql`insert into leak_words (word)
      select distinct lexeme from unnest(${[...words]}::text[]) as t(word)
        cross join lateral unnest(tsvector_to_array(to_tsvector('simple', t.word))) as lexeme
      order by 1 on conflict do nothing`.execute(trx);
    for (const w of words) written.add(w);
  }

  /**
   * After its commit: the words a transaction wrote to leak_words (addWords) are there for good
   * (nothing removes a word), so later batches of this process need not write them again. Only
   * committed ones: a word of a transaction rolled back may still be missing. Bounded in memory.
   */
  wordsCommitted(words: Set<string>): void {
    if (this.committedWords.size + words.size > MAX_KNOWN_WORDS) this.committedWords.clear();
    for (const w of words) this.committedWords.add(w);
  }

  private readonly committedWords = new Set<string>();

  /** Per source: how many more batches are written through the temporary table (see copyRecords). */
  private readonly directCopyPaused = new Map<string, number>();

  /** Whether the next COPY batch of a source goes straight into leak_records (see copyRecords); counts a pause down. */
  private directCopy(sourceId: string): boolean {
    const pause = this.directCopyPaused.get(sourceId) ?? 0;
    if (pause === 0) return true;
    if (pause === 1) this.directCopyPaused.delete(sourceId);
    else this.directCopyPaused.set(sourceId, pause - 1);
    return false;
  }

  async readCounters(): Promise<Map<string, number>> {
    return new Map((await this.db.selectFrom('leak_counters').selectAll().execute()).map((c) => [c.key, Number(c.n)]));
  }

  /** The query of records as JSON text (see RECORD_JSON), on `from` (a CTE's query creator). */
  recordsQuery(from: QueryCreator<DB> = this.db) {
    return from.selectFrom('leak_records').innerJoin('leak_sources', 'leak_sources.id', 'leak_records.source_id').select(this.recordColumns());
  }

  /** What a record is read as (its source joined): its id and its JSON text. */
  recordColumns() {
    return ['leak_records.id', RECORD_JSON[this.database.dialect].as('json')] as const;
  }

  async recordJson(id: string): Promise<string | undefined> {
    const row = (await this.recordsQuery().where('leak_records.id', '=', id).executeTakeFirst()) as RecordRow | undefined;
    return row?.json;
  }

  /**
   * Have I Been Pwned range format: `SUFFIX:COUNT` lines for every password SHA-1 starting with
   * `prefix`, in suffix order. `pad` (the Add-Padding request header): random suffixes with count 0
   * are mixed in, in order, until the answer holds between PADDED_MIN and PADDED_MAX lines, so that
   * its size does not tell an observer of the encrypted traffic how many hashes share the prefix.
   */
  async passwordRange(prefix: string, pad: boolean, mode: HashMode = 'sha1'): Promise<string> {
    const upper = prefix.toUpperCase();
    const next = (parseInt(upper, 16) + 1).toString(16).toUpperCase().padStart(5, '0');
    const column = mode === 'ntlm' ? 'password_ntlm' : 'password_sha1';
    let q = this.db
      .selectFrom('leak_records')
      .select([`${column} as hash`, (eb) => eb.fn.countAll().as('n')])
      .where(column, '>=', upper);
    if (upper !== 'FFFFF') q = q.where(column, '<', next);
    const rows = await q.groupBy(column).orderBy(column).execute();
    const counts = new Map(rows.map((r) => [(r.hash as string).slice(5), Number(r.n)]));
    const lines = (suffixes: Iterable<string>) => Array.from(suffixes, (s) => `${s}:${counts.get(s) ?? 0}`).join('\r\n');
    if (!pad) return lines(counts.keys());
    const suffixes = new Set(counts.keys());
    const wanted = randomInt(PADDED_MIN, PADDED_MAX + 1);
    const length = mode === 'ntlm' ? 27 : 35;
    while (suffixes.size < wanted) suffixes.add(randomBytes(18).toString('hex').slice(0, length).toUpperCase());
    return lines([...suffixes].sort());
  }

  /** Whether a password SHA-1 is in the corpus, on `db` (the caller's transaction when there is one). */
  async hasPasswordSha1(db: Kysely<DB>, sha1: string): Promise<boolean> {
    return (await db.selectFrom('leak_records').select('id').where('password_sha1', '=', sha1).limit(1).executeTakeFirst()) !== undefined;
  }

  /** The source figures of GET /leaks/stats/. */
  async sourceFigures() {
    const total = await this.db.selectFrom('leak_sources').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const top = await this.db.selectFrom('leak_sources').select(['id', 'name', 'record_count']).orderBy('record_count', 'desc').orderBy('id').limit(10).execute();
    const latest = await this.db.selectFrom('leak_sources').select(['id', 'name', 'breach_date', 'created_at']).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    return { total: Number(total.n), top, latest };
  }

  /**
   * After a large load on PostgreSQL: VACUUM sets the visibility map so searches count and page
   * from index-only scans (freshly written pages send every index entry back to the table), and
   * ANALYZE gives the planner the new distribution. Autovacuum would get there, later.
   */
  async afterLargeLoad(): Promise<void> {
    if (this.database.dialect !== 'postgres') return;
    // Shards: each shard vacuums its own tables, all at once; the main database's statistics of
    // the partitioned table (which the search's estimates read) are sampled from them after.
    const shards = this.database.corpusShards;
    if (shards) await Promise.all(shards.pools.map((p) => p.query('vacuum (analyze) leak_records')));
    await sql.raw(shards ? 'analyze leak_records' : 'vacuum (analyze) leak_records').execute(this.db);
  }

  // --- saved searches ---

  selectSaved(orgId: string) {
    return this.db.selectFrom('saved_searches').selectAll().where('organization_id', '=', orgId);
  }

  findSaved(db: Kysely<DB>, orgId: string, id: string) {
    return db.selectFrom('saved_searches').selectAll().where('id', '=', id).where('organization_id', '=', orgId).executeTakeFirst();
  }

  async insertSaved(db: Kysely<DB>, row: Insertable<DB['saved_searches']>): Promise<void> {
    await db.insertInto('saved_searches').values(row).execute();
  }

  async updateSaved(db: Kysely<DB>, id: string, patch: { name?: string; query?: string }, at: string): Promise<void> {
    await db
      .updateTable('saved_searches')
      .set((eb) => ({ ...patch, updated_at: at, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async deleteSaved(db: Kysely<DB>, id: string): Promise<void> {
    await db.deleteFrom('saved_searches').where('id', '=', id).execute();
  }

  async markSavedRun(id: string, at: string, count: number): Promise<void> {
    await this.db.updateTable('saved_searches').set({ last_run_at: at, last_result_count: count }).where('id', '=', id).execute();
  }
}
