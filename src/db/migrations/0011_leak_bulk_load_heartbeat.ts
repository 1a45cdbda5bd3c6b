import type { Kysely } from 'kysely';
import { timestamp } from './dialect.js';

/**
 * When the process running a bulk load last showed it was alive (each commit of its load, each step
 * of its rebuild), so that `threatmon serve` starting meanwhile tells a load in progress, which it
 * leaves to its importer, from one whose importer was killed, which it finishes. A load begun before
 * this migration has none: it counts as interrupted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leak_bulk_loads').addColumn('heartbeat_at', timestamp(db)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leak_bulk_loads').dropColumn('heartbeat_at').execute();
}
