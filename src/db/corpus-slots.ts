import { hash } from 'node:crypto';
import { serverErrorCode } from './pg-errors.js';

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
  if (err instanceof ShardUnavailable) return err.shard;
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code !== 'string' || !CONNECTION_CODES.test(e.code) || typeof e.message !== 'string') return null;
  const m = /server "[A-Za-z0-9_]*_corpus_shard_(\d+)"/.exec(e.message);
  return m ? `corpus shard ${m[1]}` : null;
}

/** A shard written to directly could not be reached (refused, cut, shut down). */
export class ShardUnavailable extends Error {
  constructor(
    readonly shard: string,
    override readonly cause: unknown,
  ) {
    super(`${shard} cannot be reached: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'ShardUnavailable';
  }
}

/** The SQLSTATEs of a connection that failed or a server shutting down: class 08, and 57P01-57P03. */
const CONNECTION_CODES = /^(08|57P0)/;

/** A failure of the connection to a shard rather than of the statement: no error from the server, or a CONNECTION_CODES one. */
export function connectionFailed(err: unknown): boolean {
  const code = serverErrorCode(err);
  return code === null || CONNECTION_CODES.test(code);
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

/** Slot i goes to shard i mod n at first: the slots spread evenly. */
export function initialSlots(shards: number): string[][] {
  const out: string[][] = Array.from({ length: shards }, () => []);
  for (let i = 0; i < SLOTS; i++) out[i % shards]?.push(HEX[i] as string);
  return out;
}

/** PostgreSQL's undefined_object: a prepared transaction already committed or rolled back (by recovery). */
export const isGone = (err: unknown) => (err as { code?: unknown } | null)?.code === '42704';

/** On a shard: its slot tables (`leak_records_s0` ... `_sf`), each with whether it is attached to its leak_records (a copy being moved is not). */
export const SLOT_TABLES = `select c.relname as name, c.relispartition as attached from pg_class c
  where c.relkind = 'r' and c.relname ~ '^leak_records_s[0-9a-f]$' and c.relnamespace = current_schema()::regnamespace order by 1`;
