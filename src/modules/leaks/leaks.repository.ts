import { MOVE_LOCK } from '../../db/corpus-shards.js';
import { randomBytes, randomInt } from 'node:crypto';
import { type Insertable, type Kysely, type QueryCreator, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import { pgIso, pgIsoText } from '../../db/json.js';
import type { DB } from '../../db/schema.js';
import type { LeakRecordsTable, LeakSourcesTable } from './leaks.tables.js';
import { type NormalisedRecord, type RecordSeverity, recordKey } from '../../domain/leak-record.js';
import { allSettledOrThrow } from '../../domain/promises.js';
import { notFound } from '../../errors.js';
import type { InsertedRecord } from '../hooks.js';
import { CorpusCopies, type EncodedRows, encodeRows } from './leaks.copy-rows.js';
import { keyOrder, RECORD_COLUMNS, recordValues } from './leaks.record-rows.js';
import { newWords, WordHashes } from './word-hashes.js';

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

/** The columns a record's counter changes are made of (counterDeltas, domainDeltas). */
const COUNTED_COLUMNS = ['email', 'username', 'domain_rev', 'ip', 'phone', 'full_name', 'password_sha1', 'extra', 'leaked_at'] as const;

/** Most words an ingesting process remembers as being in leak_words already (hashed: 32 MB at most, see WordHashes). */
const MAX_KNOWN_WORDS = 2_000_000;

export { DIRECT_COPY_PAUSE } from './leaks.copy-rows.js';

/** A stored record's columns as the ingest hooks read them: all but its key and when it was stored. */
const STORED_COLUMNS = RECORD_COLUMNS.filter((c): c is Exclude<(typeof RECORD_COLUMNS)[number], 'fingerprint' | 'created_at'> => c !== 'fingerprint' && c !== 'created_at');
type StoredRow = Pick<LeakRecordsTable, (typeof STORED_COLUMNS)[number]>;

/** PostgreSQL: a batch of this many records or more is written with COPY (see CorpusCopies); fewer, with INSERTs. */
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
  ) {
    this.copies = new CorpusCopies(database);
  }

  /** PostgreSQL: batches written by COPY. */
  private readonly copies: CorpusCopies;

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

  /**
   * PostgreSQL, as an ingest's transaction opens: holds its source (as the records' foreign key
   * would for each row), or fails when the source is gone. A deletion of the source then waits for
   * the transaction's commit and removes what it stored (see LeaksService.deleteSource): a bulk
   * load, which sets the foreign key aside, leaves no record without its source either. The
   * deletion holds it `for update`, which waits for those transactions.
   */
  async holdSource(trx: Kysely<DB>, sourceId: string, mode: 'key share' | 'update' = 'key share'): Promise<void> {
    if (this.database.sqlite) return;
    const { rows } = await sql`select 1 from leak_sources where id = ${sourceId} for ${sql.raw(mode === 'update' ? 'update' : 'key share')}`.execute(trx);
    if (!rows.length) throw notFound('No such leak source: it was deleted meanwhile.');
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
      .select(['id', ...COUNTED_COLUMNS])
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
    words: WordHashes,
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
      const keys = records.map((r) => r.key ?? recordKey(sourceId, r.fingerprint));
      const shards = this.database.corpusShards;
      if (shards || records.length >= COPY_FROM_RECORDS) {
        // Shards are always written by COPY: each shard's rows go to it directly (see CorpusCopies).
        const { rows, order } = encodeRows(records, keys, this.newId, sourceId, at, Boolean(shards));
        const returned = new Set(await this.copies.write(trx, sourceId, rows));
        // In the records' order, as a row-by-row insert reports them.
        const idOf = new Array<string | undefined>(records.length);
        order.forEach((i, row) => (idOf[i] = rows.ids[row]));
        records.forEach((r, i) => {
          const id = idOf[i];
          if (id !== undefined && returned.has(id)) {
            inserted.push(r);
            insertedIds.push(id);
          }
        });
      } else {
        const ids = records.map(() => '');
        // Ids handed out in key order, the order rows go in: the primary key then grows at its
        // right edge, its pages filled, instead of splitting at random (70% full).
        for (const i of keyOrder(keys)) ids[i] = this.newId();
        const returned = new Set(await this.insertRows(trx, records, ids, keys, sourceId, at));
        records.forEach((r, i) => {
          if (returned.has(ids[i] as string)) {
            inserted.push(r);
            insertedIds.push(ids[i] as string);
          }
        });
      }
      // Given words are added whatever the batch's records turned out to be: some of them may be
      // of the records of the next batch (see IngestItem.words).
      if (givenWords) await this.addWords(trx, givenWords, words);
      else if (inserted.length) await this.addWords(trx, inserted.map((r) => r.search_text.split(' ')), words);
    }
    return { inserted, insertedIds };
  }

  /**
   * PostgreSQL: rows made in COPY's text format where they were read (the CLI's reader thread),
   * written as they are, skipping keys already stored; returns the ids of the rows that were new.
   * The batch's search words are added as given (see insertRecords): over shards at the same time
   * as the rows, the words going to the main database and the rows to the shards' own connections.
   */
  async insertEncoded(trx: Kysely<DB>, sourceId: string, rows: EncodedRows, words: WordHashes, givenWords: ReadonlyArray<readonly string[]>): Promise<string[]> {
    if (!this.database.corpusShards) {
      const ids = await this.copies.write(trx, sourceId, rows);
      await this.addWords(trx, givenWords, words, rows.words);
      return ids;
    }
    const [ids] = await allSettledOrThrow([this.copies.write(trx, sourceId, rows), this.addWords(trx, givenWords, words, rows.words)]);
    return ids;
  }

  /**
   * PostgreSQL: the records `ids` as `trx` sees them (on shards, through its batch's own
   * transaction there: rows not committed yet are seen), in the order of `ids`: a batch written from
   * COPY bytes has no records in hand, and reads them back only when a hook or a counter needs them.
   */
  async storedRecords(trx: Kysely<DB>, ids: readonly string[]): Promise<InsertedRecord[]> {
    if (ids.length === 0) return [];
    // Times as text, as the main database's connections read them (a shard's read them as Dates).
    const columns = STORED_COLUMNS.map((c) => (c === 'leaked_at' ? `${pgIsoText(c)} as ${c}` : c)).join(', ');
    const shards = this.database.corpusShards;
    const rows: StoredRow[] = [];
    if (shards) {
      const batch = shards.batchOf(trx);
      if (batch) for (const [position, list] of shards.byShard(ids, (id) => id)) rows.push(...(await batch.read<StoredRow>(position, `select ${columns} from leak_records where id = any($1)`, [list])));
    } else {
      rows.push(...(await sql<StoredRow>`select ${sql.raw(columns)} from leak_records where id = any(${[...ids]})`.execute(trx)).rows);
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const r = byId.get(id);
      return r ? [{ ...r, extra: JSON.parse(r.extra) as Record<string, string>, severity: r.severity as RecordSeverity }] : [];
    });
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
   * PostgreSQL: the full-text words of new records (their search texts' words, in lists, and those of
   * `text`, search texts joined by spaces as EncodedRows.words gives them) into
   * leak_words (see migration 0008), each tokenised by PostgreSQL itself, so that the words are exactly the lexemes
   * of the records' tsvectors. In order, so that concurrent ingests lock them in the same order.
   * Words this process saw committed (wordsCommitted), or this transaction already wrote, are left
   * out: most words of a batch (names, short numbers) are in the vocabulary already.
   */
  async addWords(trx: Kysely<DB>, lists: ReadonlyArray<readonly string[]>, written: WordHashes, text?: string) {
    const words: string[] = [];
    for (const list of lists) for (const w of list) newWords(w, this.committedWords, written, words);
    if (text) newWords(text, this.committedWords, written, words);
    if (words.length === 0) return;
    await sql`insert into leak_words (word)
      select distinct lexeme from unnest(${words}::text[]) as t(word)
        cross join lateral unnest(tsvector_to_array(to_tsvector('simple', t.word))) as lexeme
      order by 1 on conflict do nothing`.execute(trx);
  }

  /**
   * After its commit: the words a transaction wrote to leak_words (addWords) are there for good
   * (nothing removes a word), so later batches of this process need not write them again. Only
   * committed ones: a word of a transaction rolled back may still be missing. Bounded in memory.
   */
  wordsCommitted(words: WordHashes): void {
    if (this.committedWords.size + words.size > MAX_KNOWN_WORDS) this.committedWords.clear();
    this.committedWords.addAll(words);
  }

  private readonly committedWords = new WordHashes(1 << 16);

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
    // Shards: each shard vacuums and analyses its own tables, all at once; searches read their
    // statistics there (ShardSearch.corpusStats, estimates). The main database's ANALYZE of its
    // foreign tables is not run: PostgreSQL 15's postgres_fdw fetches every row to sample them.
    const shards = this.database.corpusShards;
    if (shards) await Promise.all(shards.pools.map((p) => p.query('vacuum (analyze) leak_records')));
    else await sql`vacuum (analyze) leak_records`.execute(this.db);
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
