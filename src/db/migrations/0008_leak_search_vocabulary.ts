import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * PostgreSQL: leak_words, every lexeme of the records' tsvectors, so that a prefix search (`jam*`)
 * can be spelled out as the words it stands for (james | jamie) before it runs: GIN matches a
 * handful of whole words about three times faster than a prefix (see LeaksService.expandPrefixes).
 * Words are added in the transaction that adds their records and never removed: a word whose
 * records are gone matches nothing, which changes no result. Existing records' words are gathered
 * here by ts_stat, one pass over the table (5 s for 1M records).
 *
 * SQLite: nothing. Its FTS5 index lists its own words (fts5vocab), but only by reading their
 * postings, which costs what the prefix search saves.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create table leak_words (word text collate "C" primary key)`.execute(db);
  await sql`insert into leak_words (word) select word from ts_stat('select search_vector from leak_records') order by word`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql`drop table leak_words`.execute(db);
}
