import type { Database } from './database.js';
import { migrateToLatest } from './migrator.js';

/**
 * The database made ready for threatmon: its migrations applied, then (THREATMON_CORPUS_SHARDS)
 * the corpus spread over its shards, or checked to be. Returns the migrations applied.
 */
export async function prepareDatabase(database: Database): Promise<string[]> {
  const applied = await migrateToLatest(database.db);
  await database.corpusShards?.setup(database.db);
  return applied;
}
