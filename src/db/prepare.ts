import { repairLayoutIfIdle } from './corpus-rebalance.js';
import type { Database } from './database.js';
import { migrateToLatest } from './migrator.js';

/**
 * The database made ready for threatmon: its migrations applied, then (THREATMON_CORPUS_SHARDS)
 * the corpus spread over its shards, or checked to be. Returns the migrations applied.
 */
export async function prepareDatabase(database: Database): Promise<string[]> {
  const applied = await migrateToLatest(database.db);
  await prepareShards(database);
  return applied;
}

/** THREATMON_CORPUS_SHARDS: the corpus spread (or checked to be), and a move cut off put right. */
export async function prepareShards(database: Database): Promise<void> {
  const shards = database.corpusShards;
  if (!shards) return;
  await shards.setup(database.db);
  await repairLayoutIfIdle(database.db, shards);
}
