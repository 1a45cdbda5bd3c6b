// Shared by migrations only. Frozen: a migration's meaning must never change after it has run,
// so change nothing here; add a new helper instead.
import { type Kysely, PostgresAdapter } from 'kysely';

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** timestamptz on PostgreSQL; ISO-8601 text (which sorts in time order) on SQLite. */
export function timestamp(db: Kysely<any>) {
  return isPostgres(db) ? ('timestamptz' as const) : ('text' as const);
}

/** uuid on PostgreSQL; text on SQLite. */
export function uuid(db: Kysely<any>) {
  return isPostgres(db) ? ('uuid' as const) : ('text' as const);
}

/** boolean on PostgreSQL; integer 0/1 on SQLite. */
export function boolean(db: Kysely<any>) {
  return isPostgres(db) ? ('boolean' as const) : ('integer' as const);
}
