import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * Full-text words split letters from digits ("harris6915" -> harris 6915), so a prefix search
 * expands to a few words instead of thousands (see textWords in src/domain/leak-record.ts). Rewrites
 * every record's search_text the new way; SQLite then rebuilds its full-text index, PostgreSQL
 * recomputes the generated tsvector as each row is updated.
 */

// Frozen copy of the rule at the time of this migration, applied to the old text (each whole value
// followed by its new words): the words in order, so phrases still match within a value.
function rewrite(searchText: string): string {
  return (searchText.toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? []).join(' ');
}

const BATCH = 5000;

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  let after: string | null = null;
  for (;;) {
    let q = db.selectFrom('leak_records').select(['id', 'search_text']).orderBy('id').limit(BATCH);
    if (after !== null) q = q.where('id', '>', after);
    const rows = (await q.execute()) as Array<{ id: string; search_text: string }>;
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    const changed = rows.map((r) => ({ id: r.id, text: rewrite(r.search_text) })).filter((r, i) => r.text !== rows[i]!.search_text);
    if (changed.length === 0) continue;
    if (pg) {
      const values = sql.join(changed.map((c) => sql`(${c.id}::uuid, ${c.text})`));
      await sql`update leak_records set search_text = v.text from (values ${values}) as v(id, text) where leak_records.id = v.id`.execute(db);
    } else {
      for (const c of changed) await db.updateTable('leak_records').set({ search_text: c.text }).where('id', '=', c.id).execute();
    }
  }
  if (!pg) {
    // The index now differs from its content table: rebuild it from the rewritten texts. A bulk load
    // in progress has its records indexed by this rebuild already, so it must not add them again.
    await sql`insert into leak_records_fts(leak_records_fts) values ('rebuild')`.execute(db);
    await sql`update leak_bulk_loads set from_rowid = (select coalesce(max(rowid), 0) from leak_records)`.execute(db);
  }
}

export async function down(): Promise<void> {
  // The old texts cannot be recovered from the new ones: they stay rewritten.
}
