import { type Kysely, sql } from 'kysely';

/**
 * An index of leak_records added or removed by a migration. While a bulk load (SQLite) has the
 * indexes set aside, its definition joins (or leaves) those the load's end builds, in
 * leak_bulk_loads, instead of being built under the load.
 */
export async function createLeakIndex(db: Kysely<any>, name: string, definition: string): Promise<void> {
  const { rows: loads } = await sql<{ dropped_indexes: string }>`select dropped_indexes from leak_bulk_loads`.execute(db);
  if (!loads[0]) {
    await sql.raw(definition).execute(db);
    return;
  }
  const aside = JSON.parse(loads[0].dropped_indexes) as Array<{ type?: string; name: string; sql: string }>;
  aside.push({ type: 'index', name, sql: definition });
  await sql`update leak_bulk_loads set dropped_indexes = ${JSON.stringify(aside)}`.execute(db);
}

export async function dropLeakIndex(db: Kysely<any>, name: string): Promise<void> {
  await sql.raw(`drop index if exists ${name}`).execute(db);
  const { rows: loads } = await sql<{ dropped_indexes: string }>`select dropped_indexes from leak_bulk_loads`.execute(db);
  if (loads[0]) {
    const aside = (JSON.parse(loads[0].dropped_indexes) as Array<{ name: string }>).filter((o) => o.name !== name);
    await sql`update leak_bulk_loads set dropped_indexes = ${JSON.stringify(aside)}`.execute(db);
  }
}
