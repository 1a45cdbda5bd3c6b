import { ShardBatch } from './corpus-shard-batch.js';
import { connectionFailed, initialSlots, isGone, ShardUnavailable, slotOfId } from './corpus-slots.js';
import { CompiledQuery, Kysely, PostgresDialect, type SelectQueryBuilder, sql } from 'kysely';
import pg from 'pg';
import { currentSchema, migrateToLatest } from './migrator.js';
import { replicaName } from './replicas.js';
import type { DB } from './schema.js';

/** The corpus spread over several PostgreSQL servers: see corpus-slots.ts for how records are placed. */
export { SLOTS, unreachableShard, ShardUnavailable, recordSlot, routeSlot, idInSlot, slotOfId, initialSlots } from './corpus-slots.js';

export interface ShardInfo {
  /** host:port/database, without credentials. */
  name: string;
  /** The URL its direct connections take (kept in the main database as its user mapping keeps the password). */
  url: string;
  slots: string[];
}

/** The text of a string literal (the names and options below come from configuration, not clients). */
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Connections to each shard's database, for the writes that go straight to it. */
const SHARD_POOL_SIZE = 4;
/** PostgreSQL's undefined_table: a slot's table dropped on its old shard after it moved (see readEach). */
const isDropped = (err: unknown) => (err as { code?: unknown } | null)?.code === '42P01';
/** Times a read that raced a slot's move is run again on the new layout before it gives up. */
const READ_ATTEMPTS = 3;

/** One shard's part of a read (CorpusShards.readEach). */
export interface ShardPart {
  position: number;
  /** Its connections (as the main database's: timestamps as ISO text, plans kept). */
  db: Kysely<DB>;
  /** The slots of the read it holds. */
  slots: string[];
  /** Its records of those slots, as a table named leak_records (the union of the slots' tables). */
  records: () => SelectQueryBuilder<DB, 'leak_records', object>;
  /** Names the part in a statement's shape (its SQL differs by the slots it reads). */
  key: string;
}

export class CorpusShards {
  readonly names: string[];
  shards: ShardInfo[] = [];
  /** Each shard's connections, by position. */
  pools: pg.Pool[] = [];
  /** The layout (which shard holds which slot) this process knows: corpus_layout's version. */
  private version = -1;
  /** The main database's schema: names this corpus's prepared transactions on the shards. */
  schema = '';
  private readonly batches = new WeakMap<object, ShardBatch>();

  /**
   * `readerFor`: the connections a shard is read through, made as the main database's are (see
   * database.ts): pooled apart from the writes' (kyselyOf), with their own statement settings.
   */
  constructor(
    readonly urls: string[],
    private readonly readerFor: (url: string) => Kysely<DB>,
  ) {
    this.names = urls.map(replicaName);
  }

  /**
   * A read of the corpus asked of the shards directly, all at once (those holding any of `slots`,
   * else every one): `read` gets each shard's part, its records read from the tables of the slots
   * the layout gives it, never from its partitioned leak_records (a moving slot is attached to its
   * new shard before the layout says so). A read that raced a move's end (a slot's table dropped
   * under it) runs again on the new layout. Returns the layout's version it read by: a read that
   * must not mix two layouts checks it against corpus_layout's afterwards (see layoutChanged).
   */
  async readEach<T>(main: Kysely<DB>, read: (part: ShardPart) => Promise<T>, slots?: readonly string[]): Promise<{ results: T[]; version: number }> {
    for (let attempt = 1; ; attempt++) {
      const version = this.version;
      const parts = this.shards.flatMap((shard, position) => {
        const held = slots ? shard.slots.filter((s) => slots.includes(s)) : shard.slots;
        return held.length ? [this.partOf(position, held)] : [];
      });
      try {
        const results = await Promise.all(
          parts.map(async (part) => {
            try {
              return await read(part);
            } catch (err) {
              throw connectionFailed(err) ? new ShardUnavailable(`corpus shard ${part.position}`, err) : err;
            }
          }),
        );
        return { results, version };
      } catch (err) {
        if (!isDropped(err) || attempt >= READ_ATTEMPTS) throw err;
        await this.load(main);
      }
    }
  }

  /**
   * Whether the layout a read was made by (`version`) is not corpus_layout's `current` one: then the
   * layout is read again, and the read must be run again; a read that raced READ_ATTEMPTS moves gives up (503).
   */
  async layoutChanged(main: Kysely<DB>, version: number, current: number, attempt: number): Promise<boolean> {
    if (current === version) return false;
    if (attempt >= READ_ATTEMPTS) throw new ShardUnavailable('corpus layout', new Error('slots moved between shards while the search ran'));
    await this.load(main);
    return true;
  }

  private partOf(position: number, slots: string[]): ShardPart {
    const db = this.reader(position);
    const union = sql.raw(`(${slots.map((s) => `select * from leak_records_s${s}`).join(' union all ')})`);
    return {
      position,
      db,
      slots,
      records: () => db.selectFrom(union.as('leak_records') as never) as unknown as SelectQueryBuilder<DB, 'leak_records', object>,
      key: slots.join(''),
    };
  }

  /** Each shard's slots and whether it answers (`/health/`). */
  async status(): Promise<Array<{ shard: string; slots: number; status: 'ok' | 'unavailable' }>> {
    return Promise.all(
      this.shards.map(async (s, i) => ({
        shard: `corpus shard ${i}`,
        slots: s.slots.length,
        status: await this.reader(i)
          .executeQuery(CompiledQuery.raw('select 1'))
          .then(
            () => 'ok' as const,
            () => 'unavailable' as const,
          ),
      })),
    );
  }

  /** The connections reads of the shard at `position` take. */
  private reader(position: number): Kysely<DB> {
    const url = this.shards[position]?.url as string;
    let k = this.readers.get(url);
    if (!k) this.readers.set(url, (k = this.readerFor(url)));
    return k;
  }

  private readonly readers = new Map<string, Kysely<DB>>();

  /** The position of the shard holding a slot. */
  positionOf(slot: string): number {
    const i = this.shards.findIndex((s) => s.slots.includes(slot));
    if (i < 0) throw new Error(`no shard holds slot ${slot}`);
    return i;
  }

  /** `items` by the position of the shard holding the record each names (`idOf`: its record's id), each list in the order given. */
  byShard<T>(items: Iterable<T>, idOf: (item: T) => string): Map<number, T[]> {
    const out = new Map<number, T[]>();
    for (const item of items) {
      const position = this.positionOf(slotOfId(idOf(item)));
      const list = out.get(position);
      if (list) list.push(item);
      else out.set(position, [item]);
    }
    return out;
  }

  /**
   * The shards' part of a main-database transaction (`trx`), opened on its first write: the
   * transaction holds the layout lock shared (a slot moves only while no write is in progress, see
   * corpus-rebalance.ts) and the layout is read again if it changed.
   */
  async batchFor(trx: Kysely<DB>): Promise<ShardBatch> {
    let b = this.batches.get(trx);
    if (b) return b;
    await sql`select pg_advisory_xact_lock_shared(${LAYOUT_LOCK})`.execute(trx);
    const { rows } = await sql<{ version: number }>`select version from corpus_layout`.execute(trx);
    if (rows[0]?.version !== this.version) await this.load(trx);
    this.batches.set(trx, (b = new ShardBatch(this.pools, (batch, position) => this.gid(batch, position))));
    return b;
  }

  /** Reads the layout (corpus_shards), with a pool for any shard new to this process. */
  async load(db: Kysely<DB>): Promise<void> {
    const { rows } = await sql<{ version: number }>`select version from corpus_layout`.execute(db);
    const { rows: stored } = await sql<{ name: string; url: string; slots: string }>`select name, url, slots from corpus_shards order by position`.execute(db);
    this.shards = stored.map((r) => ({ name: r.name, url: r.url, slots: [...r.slots] }));
    for (const [i, shard] of this.shards.entries()) this.pools[i] ??= shardPool(shard.url);
    this.version = rows[0]?.version ?? 0;
  }

  /** The shards' part of `trx` if it wrote to them yet (see batchFor). */
  batchOf(trx: object): ShardBatch | undefined {
    return this.batches.get(trx);
  }

  /**
   * Before `trx` commits: each shard's part prepared (PREPARE TRANSACTION), and the batch named in
   * corpus_commits within `trx`: its commit is the batch's (see recover()).
   */
  async beforeCommit(trx: Kysely<DB>): Promise<void> {
    await this.batches.get(trx)?.prepare(trx);
  }

  /** After `trx` committed: each shard's part committed. A shard that fails here is committed by recover(). */
  async afterCommit(trx: object, main: Kysely<DB>): Promise<void> {
    const b = this.batches.get(trx);
    this.batches.delete(trx);
    if (b) await b.commitPrepared(main);
  }

  /**
   * After `trx` rolled back (or failed): each shard's part rolled back. Once prepared, it is left
   * to recover(): a commit that failed on its way back may still have committed.
   */
  async afterRollback(trx: object, main: Kysely<DB>): Promise<void> {
    const b = this.batches.get(trx);
    this.batches.delete(trx);
    if (!b) return;
    if (await b.rollback()) await this.recover(main).catch(() => undefined);
  }

  gid(batch: string, position: number): string {
    return `threatmon:${this.schema}:${batch}:${position}`;
  }

  /**
   * Ends the shards' prepared transactions of batches whose main transaction ended: committed when
   * corpus_commits says the batch committed, else rolled back. A batch whose main transaction is
   * still running is waited for (the insert below waits on its row), never rolled back under it.
   */
  async recover(main: Kysely<DB>): Promise<{ committed: number; rolledBack: number }> {
    const found = new Set<string>();
    for (const pool of this.pools) {
      const { rows } = await pool.query<{ gid: string }>('select gid from pg_prepared_xacts where gid like $1', [`threatmon:${this.schema}:%`]);
      for (const { gid } of rows) found.add(gid.split(':')[2] as string);
    }
    const done = { committed: 0, rolledBack: 0 };
    for (const batch of found) {
      await sql`insert into corpus_commits (id, committed) values (${batch}, false) on conflict (id) do nothing`.execute(main);
      const { rows } = await sql<{ committed: boolean }>`select committed from corpus_commits where id = ${batch}`.execute(main);
      const commit = rows[0]?.committed === true;
      // Asked again on every shard now that the batch's main transaction has ended: each part it
      // prepared is prepared by now, and the row is deleted below only once none is left.
      for (const [i, pool] of this.pools.entries()) {
        const gid = this.gid(batch, i);
        if (!(await pool.query('select 1 from pg_prepared_xacts where gid = $1', [gid])).rowCount) continue;
        try {
          await pool.query(`${commit ? 'commit' : 'rollback'} prepared '${gid}'`);
          done[commit ? 'committed' : 'rolledBack']++;
        } catch (err) {
          if (!isGone(err)) throw err;
        }
      }
      await sql`delete from corpus_commits where id = ${batch}`.execute(main);
    }
    return done;
  }

  /** Kysely over a shard's connections (a bulk load's index builds). */
  kyselyOf(position: number): Kysely<DB> {
    let k = this.kyselys.get(position);
    if (!k) this.kyselys.set(position, (k = new Kysely<DB>({ dialect: new PostgresDialect({ pool: this.pools[position] as pg.Pool }) })));
    return k;
  }

  private readonly kyselys = new Map<number, Kysely<DB>>();

  async close(): Promise<void> {
    this.kyselys.clear();
    await Promise.all([...this.readers.values()].map((k) => k.destroy()));
    this.readers.clear();
    await Promise.all(this.pools.splice(0).map((p) => p.end()));
  }

  /**
   * Makes the main database's leak_records the partitioned table of the shards' (once; later starts
   * check that the configured shards are the ones it was made with). Each shard gets threatmon's
   * schema by the same migrations, its leak_records split into its slots' tables.
   */
  async setup(main: Kysely<DB>): Promise<void> {
    const schema = await currentSchema(main);
    this.schema = schema;
    this.pools = this.urls.map(shardPool);
    for (const [i, pool] of this.pools.entries()) {
      const { rows } = await pool.query<{ n: string }>('select current_setting($1) as n', ['max_prepared_transactions']);
      if (Number(rows[0]?.n) < 1) {
        throw new Error(`THREATMON_CORPUS_SHARDS: ${this.names[i]} has max_prepared_transactions = 0; each ingest commits on every shard it wrote to together (two-phase commit): set it to 64 or more and restart that server`);
      }
      // The staging tables of connections that are gone (ShardBatch).
      const { rows: stale } = await pool.query<{ name: string }>(`select c.relname as name from pg_class c where c.relkind = 'r' and c.relname ~ '^leak_records_incoming_[0-9]+$'
        and substring(c.relname from '[0-9]+$')::int not in (select pid from pg_stat_activity)`);
      for (const { name } of stale) await pool.query(`drop table if exists ${name}`);
    }
    if (await isPartitioned(main, schema)) {
      await this.load(main);
      // The servers configured are those the corpus was spread over, in order; shards added since
      // (`threatmon corpus add-shard`) are known from the database.
      const configured = this.names.join(', ');
      const made = this.shards.map((s) => s.name).join(', ');
      if (configured !== this.shards.slice(0, this.names.length).map((s) => s.name).join(', ')) {
        throw new Error(`THREATMON_CORPUS_SHARDS names ${configured}, but the corpus is spread over ${made}: list the same servers in the same order`);
      }
      await this.recover(main);
      return;
    }
    const { rows: any } = await sql<{ one: number }>`select 1 as one from leak_records limit 1`.execute(main);
    if (any.length) throw new Error('THREATMON_CORPUS_SHARDS: this database already holds leak records; spread an empty corpus (import into the sharded one)');

    const slots = initialSlots(this.urls.length);
    const remote: string[] = [];
    for (const [i, url] of this.urls.entries()) remote.push(await prepareShard(url, slots[i] as string[]));
    await main.transaction().execute(async (trx) => {
      await sql`create extension if not exists postgres_fdw`.execute(trx);
      await sql.raw(`create table if not exists corpus_shards (position int primary key, server text not null, name text not null, url text not null, remote_schema text not null, slots text not null)`).execute(trx);
      await sql.raw(`create table if not exists corpus_layout (version int not null)`).execute(trx);
      await sql.raw(`insert into corpus_layout (version) values (1)`).execute(trx);
      // The batches written to several shards whose main transaction committed (see recover()).
      await sql.raw(`create table if not exists corpus_commits (id uuid primary key, committed boolean not null default true)`).execute(trx);
      // The alerts' reference to a record cannot be a foreign key any more: a partitioned table
      // of foreign tables has no index to hold one. Deleting records deletes their alerts (LeaksService).
      await sql`alter table monitor_alerts drop constraint if exists monitor_alerts_leak_record_id_fkey`.execute(trx);
      await sql`alter table leak_records rename to leak_records_unsharded`.execute(trx);
      await sql`create table leak_records (like leak_records_unsharded including defaults including generated) partition by list ((right(id::text, 1)))`.execute(trx);
      await sql`drop table leak_records_unsharded`.execute(trx);
      for (const [i, remoteSchema] of remote.entries()) {
        await addServer(trx, schema, i, this.urls[i] as string, remoteSchema);
        await boundShard(trx, i, slots[i] as string[]);
      }
    });
    await this.load(main);
  }
}

/** Whether `leak_records` of `schema` is partitioned: the corpus is spread (main database), or the server is a shard already. */
async function isPartitioned(db: Kysely<DB>, schema: string): Promise<boolean> {
  const { rows } = await sql<{ relkind: string }>`select c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relname = 'leak_records'`.execute(db);
  return rows[0]?.relkind === 'p';
}

function shardPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: SHARD_POOL_SIZE, connectionTimeoutMillis: 5000 });
  // An idle connection's error (the shard restarted) must not crash the process.
  pool.on('error', () => {});
  return pool;
}

/** The lock a write to the shards holds shared for its transaction, and a slot's move exclusively while it switches. */
export const LAYOUT_LOCK = sql`hashtext(current_schema() || '.corpus_layout')`;

/** Held exclusively while slots move between shards (corpus-rebalance.ts), shared by a deletion of records. */
export const MOVE_LOCK = sql`hashtext(current_schema() || '.corpus_move')`;

/** In the main database: the shard at `position` as a postgres_fdw server, with its user mapping and its row in corpus_shards (no slot yet). */
export async function addServer(trx: Kysely<DB>, schema: string, position: number, url: string, remoteSchema: string): Promise<void> {
  const u = new URL(url);
  const server = `${schema}_corpus_shard_${position}`;
  const opts = [`host ${lit(u.hostname)}`, `port ${lit(u.port || '5432')}`, `dbname ${lit(decodeURIComponent(u.pathname.slice(1)) || 'postgres')}`, "async_capable 'true'", "fetch_size '1000'"];
  await sql.raw(`create server ${server} foreign data wrapper postgres_fdw options (${opts.join(', ')})`).execute(trx);
  const user = [`user ${lit(decodeURIComponent(u.username) || 'postgres')}`, ...(u.password ? [`password ${lit(decodeURIComponent(u.password))}`] : [])];
  await sql.raw(`create user mapping for current_user server ${server} options (${user.join(', ')})`).execute(trx);
  await sql`insert into corpus_shards (position, server, name, url, remote_schema, slots) values (${position}, ${server}, ${replicaName(url)}, ${url}, ${remoteSchema}, '')`.execute(trx);
}

/**
 * In the main database: the slots the shard at `position` holds, as its foreign partition's bounds
 * (made again: a list partition's values cannot be altered in place) and in corpus_shards.
 */
export async function boundShard(trx: Kysely<DB>, position: number, slots: string[]): Promise<void> {
  const { rows } = await sql<{ server: string; remote_schema: string }>`select server, remote_schema from corpus_shards where position = ${position}`.execute(trx);
  const { server, remote_schema: remoteSchema } = rows[0] as { server: string; remote_schema: string };
  const table = `leak_records_shard_${position}`;
  await sql.raw(`drop foreign table if exists ${table}`).execute(trx);
  if (slots.length) {
    await sql
      .raw(`create foreign table ${table} partition of leak_records for values in (${slots.map(lit).join(', ')}) server ${server} options (schema_name ${lit(remoteSchema)}, table_name 'leak_records')`)
      .execute(trx);
  }
  await sql`update corpus_shards set slots = ${slots.join('')} where position = ${position}`.execute(trx);
}

/**
 * A shard's database: threatmon's migrations (its schema is the main's), then leak_records
 * partitioned by slot, one table per slot it holds, each with every index leak_records has.
 * Returns the schema its tables are in.
 */
export async function prepareShard(url: string, slots: string[]): Promise<string> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrateToLatest(db);
    const schema = await currentSchema(db);
    await db.transaction().execute(async (trx) => {
      if (await isPartitioned(trx, schema)) throw new Error(`${replicaName(url)} is a shard of another corpus already`);
      await sql`alter table leak_records rename to leak_records_template`.execute(trx);
      await sql`create table leak_records (like leak_records_template including defaults including generated) partition by list ((right(id::text, 1)))`.execute(trx);
      for (const slot of slots) {
        await sql.raw(`create table leak_records_s${slot} (like leak_records_template including all)`).execute(trx);
        await sql.raw(`alter table leak_records attach partition leak_records_s${slot} for values in (${lit(slot)})`).execute(trx);
      }
    });
    return schema;
  } finally {
    await db.destroy();
  }
}
