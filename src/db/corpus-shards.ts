import { hash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { currentSchema, migrateToLatest } from './migrator.js';
import type { DB } from './schema.js';

/**
 * The corpus spread over several PostgreSQL servers (THREATMON_CORPUS_SHARDS).
 *
 * Every record belongs to one of SLOTS slots, written into its id: the last hex digit of its
 * UUID. The main database's `leak_records` becomes a table partitioned by that digit
 * (`right(id::text, 1)`), each partition a postgres_fdw foreign table of one shard's
 * `leak_records`, which is partitioned the same way into one local table per slot it holds. So:
 * - a record found by id is asked of its slot's shard alone (the id names the slot);
 * - a record's slot is a hash of its e-mail address (else its username, phone, then its key): every
 *   record of one address is on one shard, and a search by e-mail asks that shard alone;
 * - the same record always gets the same slot, so each shard's unique key index is the whole
 *   corpus's: an ingest's `ON CONFLICT DO NOTHING` skips a repeat on whichever shard holds it;
 * - a slot moves between shards whole, as a table (adding a shard moves only the slots it takes).
 */
export const SLOTS = 16;
const HEX = '0123456789abcdef';

/**
 * The shard a PostgreSQL error says it could not reach (postgres_fdw names its foreign server:
 * `could not connect to server "public_corpus_shard_1"`), as `corpus shard 1`; null for any other error.
 */
export function unreachableShard(err: unknown): string | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code !== 'string' || !/^(08|57P0)/.test(e.code) || typeof e.message !== 'string') return null;
  const m = /server "[A-Za-z0-9_]*_corpus_shard_(\d+)"/.exec(e.message);
  return m ? `corpus shard ${m[1]}` : null;
}

/** The slot (one hex digit) of a record, from what it is searched by most precisely. */
export function recordSlot(r: { email: string | null; username_lower: string | null; phone: string | null }, key: Uint8Array): string {
  const route = r.email ?? r.username_lower ?? r.phone;
  if (route !== null) return routeSlot(route);
  return HEX[(key[key.length - 1] as number) & 15] as string;
}

/** The slot of the records whose e-mail (else username, phone) is `value`, as stored (normalised). */
export function routeSlot(value: string): string {
  return hash('md5', value, 'hex').charAt(0);
}

/** The id with its last hex digit set to `slot`. UUIDv7's last digit is random: ids keep their order. */
export function idInSlot(id: string, slot: string): string {
  return id.slice(0, -1) + slot;
}

/** The slot an id names. */
export function slotOfId(id: string): string {
  return id.charAt(id.length - 1).toLowerCase();
}

/** The SQL of a record's slot, as the partitions are bounded by. */
export const SLOT_SQL = "right(leak_records.id::text, 1)";

export interface ShardInfo {
  /** The foreign server's name in the main database. */
  server: string;
  /** host:port/database, without credentials. */
  name: string;
  slots: string[];
}

function shardName(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

/** Slot i goes to shard i mod n at first: the slots spread evenly. */
export function initialSlots(shards: number): string[][] {
  const out: string[][] = Array.from({ length: shards }, () => []);
  for (let i = 0; i < SLOTS; i++) out[i % shards]?.push(HEX[i] as string);
  return out;
}

/** The text of a string literal (the names and options below come from configuration, not clients). */
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

export class CorpusShards {
  readonly names: string[];
  shards: ShardInfo[] = [];

  constructor(readonly urls: string[]) {
    this.names = urls.map(shardName);
  }

  /**
   * Makes the main database's leak_records the partitioned table of the shards' (once; later starts
   * check that the configured shards are the ones it was made with). Each shard gets threatmon's
   * schema by the same migrations, its leak_records split into its slots' tables.
   */
  async setup(main: Kysely<DB>): Promise<void> {
    const schema = await currentSchema(main);
    const { rows: kind } = await sql<{ relkind: string }>`select c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and c.relname = 'leak_records'`.execute(main);
    if (kind[0]?.relkind === 'p') {
      this.shards = await this.stored(main, schema);
      const configured = this.names.join(', ');
      const made = this.shards.map((s) => s.name).join(', ');
      if (configured !== made) {
        throw new Error(`THREATMON_CORPUS_SHARDS names ${configured}, but the corpus is spread over ${made}: list the same servers in the same order`);
      }
      return;
    }
    const { rows: any } = await sql<{ one: number }>`select 1 as one from leak_records limit 1`.execute(main);
    if (any.length) throw new Error('THREATMON_CORPUS_SHARDS: this database already holds leak records; spread an empty corpus (import into the sharded one)');

    const slots = initialSlots(this.urls.length);
    const remote: { schema: string; url: URL }[] = [];
    for (const [i, url] of this.urls.entries()) remote.push(await prepareShard(url, slots[i] as string[]));
    await main.transaction().execute(async (trx) => {
      await sql`create extension if not exists postgres_fdw`.execute(trx);
      await sql.raw(`create table if not exists corpus_shards (position int primary key, server text not null, name text not null, slots text not null)`).execute(trx);
      // The alerts' reference to a record cannot be a foreign key any more: a partitioned table
      // of foreign tables has no index to hold one. Deleting records deletes their alerts (LeaksService).
      await sql`alter table monitor_alerts drop constraint if exists monitor_alerts_leak_record_id_fkey`.execute(trx);
      await sql`alter table leak_records rename to leak_records_unsharded`.execute(trx);
      await sql`create table leak_records (like leak_records_unsharded including defaults including generated) partition by list ((right(id::text, 1)))`.execute(trx);
      await sql`drop table leak_records_unsharded`.execute(trx);
      for (const [i, { schema: remoteSchema, url }] of remote.entries()) {
        const server = `${schema}_corpus_shard_${i}`;
        const opts = [`host ${lit(url.hostname)}`, `port ${lit(url.port || '5432')}`, `dbname ${lit(decodeURIComponent(url.pathname.slice(1)) || 'postgres')}`, "async_capable 'true'", "fetch_size '1000'"];
        await sql.raw(`create server ${server} foreign data wrapper postgres_fdw options (${opts.join(', ')})`).execute(trx);
        const user = [`user ${lit(decodeURIComponent(url.username) || 'postgres')}`, ...(url.password ? [`password ${lit(decodeURIComponent(url.password))}`] : [])];
        await sql.raw(`create user mapping for current_user server ${server} options (${user.join(', ')})`).execute(trx);
        const own = slots[i] as string[];
        await sql
          .raw(`create foreign table leak_records_shard_${i} partition of leak_records for values in (${own.map(lit).join(', ')}) server ${server} options (schema_name ${lit(remoteSchema)}, table_name 'leak_records')`)
          .execute(trx);
        await sql`insert into corpus_shards (position, server, name, slots) values (${i}, ${server}, ${this.names[i]}, ${own.join('')})`.execute(trx);
      }
    });
    this.shards = await this.stored(main, schema);
  }

  private async stored(main: Kysely<DB>, _schema: string): Promise<ShardInfo[]> {
    const { rows } = await sql<{ server: string; name: string; slots: string }>`select server, name, slots from corpus_shards order by position`.execute(main);
    return rows.map((r) => ({ server: r.server, name: r.name, slots: [...r.slots] }));
  }

  /** The shard holding a slot. */
  shardOf(slot: string): ShardInfo | undefined {
    return this.shards.find((s) => s.slots.includes(slot));
  }
}

/**
 * A shard's database: threatmon's migrations (its schema is the main's), then leak_records
 * partitioned by slot, one table per slot it holds, each with every index leak_records has.
 * Returns the schema its tables are in.
 */
async function prepareShard(url: string, slots: string[]): Promise<{ schema: string; url: URL }> {
  const { Kysely: K, PostgresDialect } = await import('kysely');
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const db = new K<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrateToLatest(db);
    const schema = await currentSchema(db);
    await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ relkind: string }>`select c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relname = 'leak_records'`.execute(trx);
      if (rows[0]?.relkind === 'p') throw new Error(`${shardName(url)} is a shard of another corpus already`);
      await sql`alter table leak_records rename to leak_records_template`.execute(trx);
      await sql`create table leak_records (like leak_records_template including defaults including generated) partition by list ((right(id::text, 1)))`.execute(trx);
      for (const slot of slots) {
        await sql.raw(`create table leak_records_s${slot} (like leak_records_template including all)`).execute(trx);
        await sql.raw(`alter table leak_records attach partition leak_records_s${slot} for values in (${lit(slot)})`).execute(trx);
      }
    });
    return { schema, url: new URL(url) };
  } finally {
    await db.destroy();
  }
}
