import type { Kysely } from 'kysely';
import { timestamp } from './dialect.js';

/**
 * Which process runs a bulk load (its host name and process id) and when it last showed it was alive
 * (each commit of its load, each step of its rebuild), so that `threatmon serve` starting meanwhile
 * tells a load in progress, which it leaves to its importer, from one whose importer was killed,
 * which it finishes. A load begun before this migration has none of them: it counts as interrupted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leak_bulk_loads').addColumn('heartbeat_at', timestamp(db)).execute();
  await db.schema.alterTable('leak_bulk_loads').addColumn('owner_host', 'text').execute();
  await db.schema.alterTable('leak_bulk_loads').addColumn('owner_pid', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['owner_pid', 'owner_host', 'heartbeat_at']) await db.schema.alterTable('leak_bulk_loads').dropColumn(column).execute();
}
