import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { copyStraight } from './copy-straight.js';
import { connectionFailed, isGone, ShardUnavailable } from './corpus-slots.js';
import type { DB } from './schema.js';

/** The staging table of a shard connection (COPY lands there, then one INSERT ... ON CONFLICT takes it in). */
const staging = new WeakMap<pg.PoolClient, string>();

/**
 * One main-database transaction's writes to the shards: on each shard it writes to, a transaction
 * of its own, prepared before the main one commits and committed after it (two-phase commit).
 */
export class ShardBatch {
  readonly id = randomUUID();
  private readonly open = new Map<number, pg.PoolClient>();
  private prepared = false;

  constructor(
    /** Each shard's connections, by position. */
    private readonly pools: readonly pg.Pool[],
    /** The name of a batch's prepared transaction on a shard (CorpusShards.gid). */
    private readonly gid: (batch: string, position: number) => string,
  ) {}

  /**
   * Rows (COPY text of `columns`, made by `rows` each time they are sent) into the shard at
   * `position`, skipping any whose key it holds; returns the ids of those that were new. With `direct` (rows of distinct keys, in key order),
   * first COPYed into leak_records itself in a savepoint, then null: every row was new. A key held
   * already fails that COPY: nothing of it stays, and the rows go through the connection's staging table.
   */
  async insert(position: number, columns: readonly string[], rows: () => Iterable<string | Uint8Array>, direct = false): Promise<string[] | null> {
    try {
      return await this.copyInto(position, columns, rows, direct);
    } catch (err) {
      throw connectionFailed(err) ? new ShardUnavailable(`corpus shard ${position}`, err) : err;
    }
  }

  private async copyInto(position: number, columns: readonly string[], rows: () => Iterable<string | Uint8Array>, direct: boolean): Promise<string[] | null> {
    const client = await this.client(position);
    const copy = async (table: string) => {
      const stream = copyFrom(`copy ${table} (${columns.join(', ')}) from stdin`);
      void client.query(stream);
      await pipeline(Readable.from(rows()), stream);
    };
    if (direct && (await copyStraight((statement) => client.query(statement), () => copy('leak_records')))) return null;
    const table = staging.get(client) as string;
    await client.query(`truncate ${table}`);
    await copy(table);
    const list = columns.join(', ');
    const inserted = await client.query<{ id: string }>(`insert into leak_records (${list}) select ${list} from ${table} order by fingerprint, id on conflict do nothing returning id`);
    return inserted.rows.map((r) => r.id);
  }

  /** Rows of a statement on the shard at `position` in this batch's transaction there: its rows not committed yet are seen. */
  async read<R extends object>(position: number, text: string, values: readonly unknown[]): Promise<R[]> {
    try {
      return (await (await this.client(position)).query<R>(text, values as unknown[])).rows;
    } catch (err) {
      throw connectionFailed(err) ? new ShardUnavailable(`corpus shard ${position}`, err) : err;
    }
  }

  private async client(position: number): Promise<pg.PoolClient> {
    let client = this.open.get(position);
    if (client) return client;
    client = await (this.pools[position] as pg.Pool).connect();
    this.open.set(position, client);
    try {
      if (!staging.has(client)) {
        // A connection cut while held must fail its next query, not crash the process (once per connection).
        client.on('error', () => {});
        // Not a temporary table: a transaction that touched one cannot be prepared. One per
        // connection (by its process id); setup drops those of connections that are gone.
        const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
        const table = `leak_records_incoming_${rows[0]?.pid}`;
        await client.query(`create unlogged table if not exists ${table} (like leak_records)`);
        staging.set(client, table);
      }
      await client.query('begin');
    } catch (err) {
      this.open.delete(position);
      client.release(true);
      throw err;
    }
    return client;
  }

  async prepare(trx: Kysely<DB>): Promise<void> {
    if (this.open.size === 0) return;
    await sql`insert into corpus_commits (id) values (${this.id})`.execute(trx);
    await Promise.all([...this.open].map(([i, c]) => c.query(`prepare transaction '${this.gid(this.id, i)}'`)));
    this.prepared = true;
  }

  async commitPrepared(main: Kysely<DB>): Promise<void> {
    if (this.open.size === 0) return;
    const results = await Promise.allSettled([...this.open].map(([i, c]) => c.query(`commit prepared '${this.gid(this.id, i)}'`)));
    this.release();
    // Committed everywhere: the batch's row is no longer needed. Else recover() commits the rest.
    if (results.every((r) => r.status === 'fulfilled' || isGone(r.reason))) await sql`delete from corpus_commits where id = ${this.id}`.execute(main);
  }

  /** Rolls back each shard's part not yet prepared; true when they were prepared (left to recover()). */
  async rollback(): Promise<boolean> {
    if (!this.prepared) await Promise.allSettled([...this.open.values()].map((c) => c.query('rollback')));
    this.release(!this.prepared);
    return this.prepared;
  }

  private release(broken = false) {
    for (const c of this.open.values()) c.release(broken);
    this.open.clear();
  }
}
