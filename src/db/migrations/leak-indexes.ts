import { type Kysely, sql } from 'kysely';

/** An index definition a bulk load in progress has set aside, for its end to build. */
export interface SetAsideIndex {
  type?: string;
  name: string;
  sql: string;
}

/**
 * Rewrites the definitions a bulk load in progress has set aside (leak_bulk_loads). Returns false,
 * changing nothing, when no load is in progress.
 */
export async function editSetAside(db: Kysely<any>, edit: (aside: SetAsideIndex[]) => SetAsideIndex[]): Promise<boolean> {
  const { rows: loads } = await sql<{ dropped_indexes: string }>`select dropped_indexes from leak_bulk_loads`.execute(db);
  if (!loads[0]) return false;
  const aside = edit(JSON.parse(loads[0].dropped_indexes) as SetAsideIndex[]);
  await sql`update leak_bulk_loads set dropped_indexes = ${JSON.stringify(aside)}`.execute(db);
  return true;
}

/**
 * An index of leak_records added or removed by a migration. While a bulk load has the indexes set
 * aside, its definition joins (or leaves) those the load's end builds instead of being built under
 * the load.
 */
export async function createLeakIndex(db: Kysely<any>, name: string, definition: string): Promise<void> {
  const setAside = await editSetAside(db, (aside) => [...aside, { type: 'index', name, sql: definition }]);
  if (!setAside) await sql.raw(definition).execute(db);
}

export async function dropLeakIndex(db: Kysely<any>, name: string): Promise<void> {
  await sql.raw(`drop index if exists ${name}`).execute(db);
  await editSetAside(db, (aside) => aside.filter((o) => o.name !== name));
}
