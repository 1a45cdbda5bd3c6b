import { type Kysely, type QueryExecutorProvider, sql } from 'kysely';
import type pg from 'pg';
import { SLOT_TABLES } from '../../db/corpus-slots.js';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { allSettledOrThrow } from '../../domain/promises.js';
import type { BulkLoads } from './leaks.bulk-load.js';

/**
 * Bulk loads on PostgreSQL (`import-leaks --bulk`): as on SQLite (leaks.bulk-load.repository.ts),
 * the search indexes of leak_records are dropped while records arrive and built at the end, one
 * sorted pass each with PostgreSQL's parallel workers, which is several times faster than keeping
 * eleven indexes (one of them full text) up to date row by row. The primary key and the unique key
 * (content keys: duplicates are skipped as records arrive) stay. Searches stay correct meanwhile,
 * only slower. The definitions dropped are kept in leak_bulk_loads. Autovacuum of the corpus's
 * tables is off while that row exists (see `autovacuum`).
 *
 * On one server the records' foreign key to their source is set aside too: PostgreSQL checks it
 * with a query per row COPYed, where once a transaction is enough. Meanwhile each ingest transaction
 * holds its source row (LeaksRepository.holdSource) and a source's deletion waits for those and
 * removes what they stored (LeaksService.deleteSource): no record is left without its source. At
 * the end the key is added back (NOT VALID, at once) and validated after the index builds.
 *
 * Who takes part is not kept in rows with heartbeats: each importer holds a shared advisory lock
 * on a connection of its own for as long as it loads. The rebuild takes the lock exclusively, so
 * it runs only when no importer is left; a killed importer's connection, and its lock, end with it.
 */

/**
 * Memory for each index build, at least (the server's default is 64 MB: larger sorts spill to disk
 * less). A server, role or connection setting that gives more keeps it: a build whose sort fits in
 * memory writes no temporary files beside the indexes already built (at 100M records the largest
 * sorts write several GB).
 */
const REBUILD_MAINTENANCE_WORK_MEM = '256MB';

/** This schema's bulk-load lock (advisory locks are per database; tests and installations may share one). */
const LOCK_KEY = sql`hashtext(current_schema() || '.leak_bulk_load')`;

/**
 * Sets the session's maintenance_work_mem to REBUILD_MAINTENANCE_WORK_MEM unless it is larger
 * already, divided by `share` (builds side by side split what one build had); returns it.
 */
export async function raiseMaintenanceWorkMem(db: QueryExecutorProvider, share = 1): Promise<string> {
  await sql`select set_config('maintenance_work_mem', (greatest(pg_size_bytes(current_setting('maintenance_work_mem')), pg_size_bytes(${REBUILD_MAINTENANCE_WORK_MEM})) / ${share}::int8 / 1024)::text || 'kB', false)`.execute(db);
  return (await sql<{ v: string }>`select current_setting('maintenance_work_mem') as v`.execute(db)).rows[0]!.v;
}

interface SetAside {
  name: string;
  sql: string;
  /** The corpus shard whose table it indexes (THREATMON_CORPUS_SHARDS); absent: the main database's. */
  shard?: number;
  /** A foreign key of leak_records (`sql` is its definition, as pg_get_constraintdef gives it), not an index. */
  foreignKey?: boolean;
}

/** A foreign key's definition without a NOT VALID it may carry (it is added NOT VALID, then validated). */
const validDefinition = (definition: string) => definition.replace(/\s+not\s+valid\s*$/i, '');

/**
 * Autovacuum of the corpus's tables, off while a load is recorded (leak_bulk_loads) and back on as
 * it ends: as a table grows, autovacuum vacuums and analyses it again and again (at 10M records over
 * three shards, four times each slot table), work the load's end does once (afterLargeLoad).
 */
const autovacuum = (table: string, on: boolean) => (on ? `alter table ${table} reset (autovacuum_enabled)` : `alter table ${table} set (autovacuum_enabled = false)`);

/** On a shard: the indexes of its slot tables that a bulk load sets aside (not a key's). */
const SHARD_INDEXES = `select i.relname as name, pg_get_indexdef(i.oid) as sql
  from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
  where t.relname ~ '^leak_records_s[0-9a-f]$' and t.relnamespace = current_schema()::regnamespace
    and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)
  order by i.relname`;

/** Autovacuum of each slot table of the shard `pool` reaches, off or back on. */
async function shardAutovacuum(pool: Pick<pg.Pool, 'query'>, on: boolean): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(SLOT_TABLES);
  for (const { name } of rows) await pool.query(autovacuum(name, on));
}

export class PgBulkLoads implements BulkLoads {
  /** The connection holding this process's shared lock while it takes part in a load. */
  private held?: { db: Kysely<DB>; release: () => void; done: Promise<void> };

  constructor(private readonly deps: Pick<AppDeps, 'database' | 'clock'>) {}

  private get db() {
    return this.deps.database.db;
  }

  get inBulkLoad(): boolean {
    return this.held !== undefined;
  }

  /** Nothing to show: a load's processes hold a lock for as long as they take part in it. */
  heartbeat(): void {}

  /** The server's page cache is its own (shared_buffers): nothing to set for an import. */
  importPageCache(): () => void {
    return () => undefined;
  }

  /** A connection of the pool kept for this process until release() (see held). */
  private async hold(): Promise<NonNullable<PgBulkLoads['held']>> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let got!: (db: Kysely<DB>) => void;
    const connection = new Promise<Kysely<DB>>((resolve) => (got = resolve));
    const done = this.db.connection().execute(async (db) => {
      got(db);
      await released;
    });
    const db = await Promise.race([connection, done.then(() => Promise.reject(new Error('no database connection for the bulk load')))]);
    return { db, release, done };
  }

  /** Starts a bulk load, or joins the one in progress (another import's, or one that was interrupted). */
  async begin(): Promise<void> {
    if (this.held) return;
    const held = await this.hold();
    try {
      // Waits while another process rebuilds (it holds the lock exclusively), then takes part.
      await sql`select pg_advisory_lock_shared(${LOCK_KEY})`.execute(held.db);
      const shards = this.deps.database.corpusShards;
      const onShards = await held.db.transaction().execute(async (trx) => {
        await sql`lock table leak_bulk_loads in exclusive mode`.execute(trx);
        if ((await sql`select 1 from leak_bulk_loads`.execute(trx)).rows.length) return [];
        let rows: SetAside[];
        if (shards) {
          // Each shard's slot tables: their definitions kept here before any is dropped there.
          const found = await Promise.all(shards.pools.map((p) => p.query<SetAside>(SHARD_INDEXES)));
          rows = found.flatMap((r, shard) => r.rows.map((i) => ({ ...i, shard })));
        } else {
          ({ rows } = await sql<SetAside>`select i.relname as name, pg_get_indexdef(i.oid) as sql
            from pg_index x join pg_class i on i.oid = x.indexrelid
            where x.indrelid = 'leak_records'::regclass
              and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)
            order by i.relname`.execute(trx));
          const keys = await sql<SetAside>`select conname as name, pg_get_constraintdef(oid) as sql from pg_constraint
            where conrelid = 'leak_records'::regclass and contype = 'f' order by conname`.execute(trx);
          rows.push(...keys.rows.map((k) => ({ ...k, foreignKey: true })));
        }
        await sql`insert into leak_bulk_loads (id, from_rowid, dropped_indexes, started_at) values (1, 0, ${JSON.stringify(rows)}, ${this.deps.clock().toISOString()})`.execute(trx);
        if (!shards) {
          for (const { name, foreignKey } of rows) await (foreignKey ? sql`alter table leak_records drop constraint ${sql.id(name)}` : sql`drop index ${sql.id(name)}`).execute(trx);
          await sql.raw(autovacuum('leak_records', false)).execute(trx);
        }
        return shards ? rows : [];
      });
      // Dropped once the load is recorded: a failure part-way leaves indexes the rebuild recreates.
      if (shards && onShards.length) {
        await Promise.all(
          shards.pools.map(async (p, i) => {
            await Promise.all(onShards.filter((r) => r.shard === i).map((r) => p.query(`drop index if exists ${r.name}`)));
            await shardAutovacuum(p, false);
          }),
        );
      }
    } catch (err) {
      held.release();
      await held.done.catch(() => undefined);
      throw err;
    }
    this.held = held;
  }

  /**
   * The end of this process's part: it rebuilds what the load set aside unless another importer
   * still holds the lock, which then rebuilds when it ends.
   */
  async end(onStep?: (step: string, ms: number) => void, onRebuild?: () => void): Promise<'rebuilt' | 'left to another import' | 'none'> {
    const held = this.held;
    if (!held) return (await this.finishInterrupted(onStep)) === 'finished' ? 'rebuilt' : 'none';
    this.held = undefined;
    try {
      await sql`select pg_advisory_unlock_shared(${LOCK_KEY})`.execute(held.db);
    } catch (err) {
      held.release();
      await held.done.catch(() => undefined);
      throw err;
    }
    const rebuilt = await this.rebuildIfAlone(held, onStep, onRebuild);
    return rebuilt === null ? 'left to another import' : rebuilt ? 'rebuilt' : 'none';
  }

  /** Rebuilds a load left by importers that are gone; one still loading is left to them. */
  async finishInterrupted(onStep?: (step: string, ms: number) => void): Promise<'finished' | 'in progress' | 'none'> {
    if (this.held) return 'in progress';
    if (!(await sql`select 1 from leak_bulk_loads`.execute(this.db)).rows.length) return 'none';
    const rebuilt = await this.rebuildIfAlone(await this.hold(), onStep);
    return rebuilt === null ? 'in progress' : rebuilt ? 'finished' : 'none';
  }

  /**
   * On `held`: rebuilds what the load set aside when no importer holds the lock (null when one
   * does: it rebuilds when it ends), then lets the lock and the connection go.
   */
  private async rebuildIfAlone(held: NonNullable<PgBulkLoads['held']>, onStep?: (step: string, ms: number) => void, onRebuild?: () => void): Promise<boolean | null> {
    try {
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${LOCK_KEY}) as locked`.execute(held.db);
      if (rows[0]?.locked !== true) return null;
      try {
        onRebuild?.();
        return await this.rebuild(held.db, onStep);
      } finally {
        await sql`select pg_advisory_unlock(${LOCK_KEY})`.execute(held.db);
      }
    } finally {
      held.release();
      await held.done;
    }
  }

  /** Same as finishInterruptedBulkLoad, as SQLite's finishBulkLoad answers: whether a load was finished. */
  async finish(onStep?: (step: string, ms: number) => void): Promise<boolean> {
    return (await this.end(onStep)) === 'rebuilt';
  }

  /**
   * Builds each index set aside, then ends the load. Run holding the lock exclusively. The
   * full-text (GIN) build is single-threaded in PostgreSQL, so it runs on a connection of its own
   * beside the B-tree builds: while it runs, they build one at a time without parallel workers
   * (which would only take its core) and each side has half the memory one build had; after, they
   * have both again. An index built stays built if the other side fails: the load is kept, and
   * its end is run again.
   */
  private async rebuild(db: Kysely<DB>, onStep?: (step: string, ms: number) => void): Promise<boolean> {
    const load = (await sql<{ dropped_indexes: string }>`select dropped_indexes from leak_bulk_loads`.execute(db)).rows[0];
    if (!load) return false;
    const aside = JSON.parse(load.dropped_indexes) as SetAside[];
    const shards = this.deps.database.corpusShards;
    const local = aside.filter((i) => i.shard === undefined && !i.foreignKey);
    const keys = aside.filter((i) => i.foreignKey);
    // Enforced again at once for rows written from now on; the rows loaded meanwhile are checked below.
    for (const { name, sql: definition } of keys) {
      const { rows: found } = await sql`select 1 from pg_constraint where conrelid = 'leak_records'::regclass and conname = ${name}`.execute(db);
      if (!found.length) await sql`alter table leak_records add constraint ${sql.id(name)} ${sql.raw(validDefinition(definition))} not valid`.execute(db);
    }
    if (local.length) await this.build(db, () => this.db, local, onStep);
    for (const { name } of keys) {
      const started = Date.now();
      await sql`alter table leak_records validate constraint ${sql.id(name)}`.execute(db);
      onStep?.(`foreign key ${name}`, Date.now() - started);
    }
    // Every shard builds its own at once, each on its own server.
    if (shards) {
      await allSettledOrThrow(
        shards.shards.map((_, i) => {
          const k = shards.kyselyOf(i);
          const mine = aside.filter((a) => a.shard === i);
          return mine.length ? k.connection().execute((conn) => this.build(conn, () => k, mine, (step, ms) => onStep?.(`shard ${i}: ${step}`, ms))) : Promise.resolve();
        }),
      );
    }
    if (shards) await Promise.all(shards.pools.map((p) => shardAutovacuum(p, true)));
    else await sql.raw(autovacuum('leak_records', true)).execute(db);
    await sql`delete from leak_bulk_loads`.execute(db);
    return true;
  }

  /** Builds `aside` on `db` (one connection), the full-text builds on another of `other` beside the rest. */
  private async build(db: Kysely<DB>, other: () => Kysely<DB>, aside: SetAside[], onStep?: (step: string, ms: number) => void): Promise<void> {
    const fullText = aside.filter((i) => /\busing\s+gin\b/i.test(i.sql));
    const rest = aside.filter((i) => !fullText.includes(i));
    let beside = 0;
    const build = async (conn: Kysely<DB>, indexes: SetAside[]) => {
      try {
        for (const { name, sql: definition } of indexes) {
          const shared = beside > 1;
          // From the session's own setting each time: halving the last build's would compound.
          await sql`reset maintenance_work_mem`.execute(conn);
          await raiseMaintenanceWorkMem(conn, shared ? 2 : 1);
          await (shared ? sql`set max_parallel_maintenance_workers = 0` : sql`reset max_parallel_maintenance_workers`).execute(conn);
          const started = Date.now();
          await sql.raw(definition.replace(/^\s*create\s+index\s+/i, 'create index if not exists ')).execute(conn);
          onStep?.(`index ${name}`, Date.now() - started);
        }
      } finally {
        beside--;
        await sql`reset maintenance_work_mem`.execute(conn);
        await sql`reset max_parallel_maintenance_workers`.execute(conn);
      }
    };
    if (fullText.length === 0 || rest.length === 0) {
      beside = 1;
      await build(db, aside);
    } else {
      beside = 2;
      await allSettledOrThrow([other().connection().execute((conn) => build(conn, fullText)), build(db, rest)]);
    }
  }
}
