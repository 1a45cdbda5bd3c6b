import type { Kysely } from 'kysely';
import { timestamp } from './dialect.js';

/**
 * The processes taking part in a bulk load (host name and process id), each with when it last
 * showed it was alive (each commit of its load, each step of a rebuild). `threatmon serve` starting
 * meanwhile tells a load in progress, which it leaves to its importers, from one whose importers
 * were killed, which it finishes; and of several imports loading side by side, the last to end
 * rebuilds the indexes. A load begun before this migration has no process: it counts as interrupted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('leak_bulk_load_processes')
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('heartbeat_at', timestamp(db), (c) => c.notNull())
    .addPrimaryKeyConstraint('leak_bulk_load_processes_pkey', ['host', 'pid'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('leak_bulk_load_processes').execute();
}
