import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { addServer, boundShard, type CorpusShards, LAYOUT_LOCK, MOVE_LOCK, prepareShard, SLOTS } from './corpus-shards.js';
import { SLOT_TABLES } from './corpus-slots.js';
import { redactedUrl } from '../config.js';
import type { DB } from './schema.js';

/**
 * Adding a shard (`threatmon corpus add-shard URL`): the new server gets threatmon's schema, then
 * takes whole slots from the shards holding the most, one slot at a time, until each shard holds
 * SLOTS / shards of them (rounded): only the records of the slots that move are copied.
 *
 * A slot moves online:
 * 1. its table is copied to the new shard from a snapshot of the old one, while ingests go on
 *    writing to the old one and searches read it;
 * 2. then, holding the layout lock exclusively (ingests wait: each holds it shared while it
 *    writes) and once every batch already committed is committed on the shards (recover()),
 *    the rows written since the snapshot are copied too;
 * 3. then, the main database's records table locked for the switch (searches wait for it, a
 *    moment), the slot's table is detached on the old shard, attached on the new one, and the
 *    foreign partitions' bounds say so; the old copy is dropped after.
 * Deleting a source waits while slots move (MOVE_LOCK): a deleted row would survive in the copy.
 */

export interface MoveReport {
  slot: string;
  from: number;
  to: number;
  /** Rows copied from the snapshot, then written since it. */
  copied: number;
  caughtUp: number;
}

/** Which slots go to the shard at `added` (one of `shards`): from the shard holding the most, one at a time. */
export function slotsToMove(shards: { slots: string[] }[], added: number): Array<{ slot: string; from: number }> {
  const held = shards.map((s) => [...s.slots]);
  const target = Math.floor(SLOTS / held.length);
  const moves: Array<{ slot: string; from: number }> = [];
  const mine = () => moves.length + (held[added]?.length ?? 0);
  while (mine() < target) {
    let from = -1;
    held.forEach((list, i) => {
      if (i !== added && (from < 0 || list.length > (held[from]?.length ?? 0))) from = i;
    });
    const slot = held[from]?.pop();
    if (slot === undefined) break;
    moves.push({ slot, from });
  }
  return moves;
}

/** The columns of the slot tables, in their order (the same on every shard: the same migrations made them). */
async function columnsOf(client: pg.PoolClient, table: string): Promise<string> {
  const { rows } = await client.query<{ list: string }>(
    `select string_agg(quote_ident(attname), ', ' order by attnum) as list from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped`,
    [table],
  );
  return rows[0]?.list as string;
}

/** COPY of `select` on `from` into `table` on `to`; returns the rows copied. */
async function copyBetween(from: pg.PoolClient, select: string, to: pg.PoolClient, table: string, columns: string): Promise<number> {
  const out = from.query(copyTo(`copy (${select}) to stdout`));
  const into = to.query(copyFrom(`copy ${table} (${columns}) from stdin`));
  await pipeline(out as unknown as Readable, into);
  return into.rowCount ?? 0;
}

/**
 * Adds the shard at `url` and moves its share of slots to it. `onMove` is told of each slot moved.
 * Run from one process at a time (the move lock makes a second wait).
 */
export async function addShard(main: Kysely<DB>, shards: CorpusShards, url: string, onMove?: (m: MoveReport) => void): Promise<MoveReport[]> {
  return main.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MOVE_LOCK})`.execute(conn);
    try {
      await shards.load(conn);
      if ((await sql`select 1 from leak_bulk_loads`.execute(conn)).rows.length) throw new Error('a bulk load is in progress: add the shard once it has finished');
      // A move cut off (the process killed): each shard's slot tables put back as the layout says first.
      await repairLayout(shards);
      let position = shards.shards.findIndex((s) => s.url === url);
      // Added already: the slots it has yet to take move now (an add-shard cut off is run again).
      if (position >= 0 && position !== shards.shards.length - 1) throw new Error(`${redactedUrl(url)} is a shard of this corpus already`);
      if (position < 0) {
        position = shards.shards.length;
        const schema = await prepareShard(url, []);
        await conn.transaction().execute(async (trx) => {
          await addServer(trx, shards.schema, position, url, schema);
          await sql`update corpus_layout set version = version + 1`.execute(trx);
        });
        await shards.load(conn);
      }
      const reports: MoveReport[] = [];
      for (const { slot, from } of slotsToMove(shards.shards, position)) {
        const report = await moveSlot(conn, shards, slot, from, position);
        reports.push(report);
        onMove?.(report);
      }
      return reports;
    } finally {
      await sql`select pg_advisory_unlock(${MOVE_LOCK})`.execute(conn);
    }
  });
}

/** At start: the slot tables put right (repairLayout) unless a move is in progress (it holds the move lock). */
export async function repairLayoutIfIdle(main: Kysely<DB>, shards: CorpusShards): Promise<number> {
  return main.connection().execute(async (conn) => {
    const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_lock(${MOVE_LOCK}) as got`.execute(conn);
    if (!rows[0]?.got) return 0;
    try {
      return await repairLayout(shards);
    } finally {
      await sql`select pg_advisory_unlock(${MOVE_LOCK})`.execute(conn);
    }
  });
}

/**
 * Each shard's slot tables as the layout says (after a move cut off between its statements on
 * the shards and its commit in the main database): a slot it holds attached to its leak_records;
 * a copy of a slot it does not hold (one being copied, or left by its old shard) detached and
 * dropped. Run holding the move lock (no move in progress). Returns the tables put right.
 */
export async function repairLayout(shards: CorpusShards): Promise<number> {
  let repaired = 0;
  for (const [i, shard] of shards.shards.entries()) {
    const pool = shards.pools[i] as pg.Pool;
    const { rows } = await pool.query<{ name: string; attached: boolean }>(SLOT_TABLES);
    for (const { name, attached } of rows) {
      const slot = name.slice(-1);
      if (shard.slots.includes(slot)) {
        if (attached) continue;
        await pool.query(`alter table leak_records attach partition ${name} for values in ('${slot}')`);
      } else {
        if (attached) await pool.query(`alter table leak_records detach partition ${name}`);
        await pool.query(`drop table ${name}`);
      }
      repaired++;
    }
  }
  return repaired;
}

async function moveSlot(main: Kysely<DB>, shards: CorpusShards, slot: string, from: number, to: number): Promise<MoveReport> {
  const table = `leak_records_s${slot}`;
  const src = await (shards.pools[from] as pg.Pool).connect();
  const dst = await (shards.pools[to] as pg.Pool).connect();
  try {
    // Left by a move that was cut off: started again from nothing.
    await dst.query(`drop table if exists ${table}`);
    await dst.query(`create table ${table} (like leak_records_template including all)`);
    const columns = await columnsOf(src, table);
    // 1. From a snapshot of the old shard, writes going on.
    await src.query('begin isolation level repeatable read');
    const { rows } = await src.query<{ snap: string }>('select pg_current_snapshot()::text as snap');
    const snapshot = rows[0]?.snap as string;
    const copied = await copyBetween(src, `select ${columns} from ${table}`, dst, table, columns);
    await src.query('commit');
    let caughtUp = 0;
    await main.transaction().execute(async (trx) => {
      // 2. No write in progress, every committed batch committed on the shards: what came since the snapshot.
      await sql`select pg_advisory_xact_lock(${LAYOUT_LOCK})`.execute(trx);
      await shards.recover(trx);
      // A row's xmin is a 32-bit transaction id; the snapshot's are 64-bit (epoch above): the
      // epoch is today's, or the one before for an id above today's counter.
      const xid8 = `(case when xmin::text::int8 <= (pg_current_xact_id()::text::int8 & 4294967295) then (pg_current_xact_id()::text::int8 >> 32) else (pg_current_xact_id()::text::int8 >> 32) - 1 end << 32 | xmin::text::int8)::text::xid8`;
      caughtUp = await copyBetween(src, `select ${columns} from ${table} where not pg_visible_in_snapshot(${xid8}, '${snapshot}'::pg_snapshot)`, dst, table, columns);
      // 3. The switch: searches wait on the records table for this moment.
      await sql`lock table leak_records in access exclusive mode`.execute(trx);
      const holds = (shards.shards[from]?.slots ?? []).filter((s) => s !== slot);
      const gets = [...(shards.shards[to]?.slots ?? []), slot].sort();
      await src.query(`alter table leak_records detach partition ${table}`);
      await dst.query(`alter table leak_records attach partition ${table} for values in ('${slot}')`);
      await boundShard(trx, from, holds);
      await boundShard(trx, to, gets);
      await sql`update corpus_layout set version = version + 1`.execute(trx);
    });
    await src.query(`drop table ${table}`);
    await shards.load(main);
    return { slot, from, to, copied, caughtUp };
  } finally {
    src.release();
    dst.release();
  }
}

