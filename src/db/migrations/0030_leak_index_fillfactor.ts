import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';
import { editSetAside } from './leak-indexes.js';

/**
 * PostgreSQL: the B-tree indexes of leak_records filled to 100% where PostgreSQL packs pages
 * (index builds, such as a bulk load's rebuild, and pages added at an index's right edge) instead
 * of its default 90%. Records are never updated, so the room kept for updates only cost a tenth of
 * the indexes' size (about 32 bytes a record of 740). Inserts between existing keys split pages
 * as before. Set on the indexes there are and on those a bulk load in progress has set aside.
 */
const WITH = "WITH (fillfactor='100')";

/** A set-aside definition (pg_get_indexdef) with the option, before its WHERE if it has one. */
function withFillFactor(definition: string): string {
  if (!/ USING btree /i.test(definition) || definition.includes('fillfactor')) return definition;
  return definition.replace(/( USING btree \([^)]*\))/i, `$1 ${WITH}`);
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await fillFactor(db, 100);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await fillFactor(db, null);
}

async function fillFactor(db: Kysely<any>, value: 100 | null): Promise<void> {
  const { rows } = await sql<{ name: string }>`select i.relname as name from pg_index x
    join pg_class i on i.oid = x.indexrelid join pg_am a on a.oid = i.relam
    where x.indrelid = 'leak_records'::regclass and a.amname = 'btree' order by 1`.execute(db);
  for (const { name } of rows) {
    await sql.raw(value === null ? `alter index ${name} reset (fillfactor)` : `alter index ${name} set (fillfactor = ${value})`).execute(db);
  }
  await editSetAside(db, (aside) =>
    aside.map((o) => ({ ...o, sql: value === null ? o.sql.replace(` ${WITH}`, '') : withFillFactor(o.sql) })),
  );
}
