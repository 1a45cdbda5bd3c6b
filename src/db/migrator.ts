import { type Kysely, type Migration, Migrator } from 'kysely';
import * as m0001 from './migrations/0001_organizations_users.js';

/** Listed in code, not read from a folder, so they run the same from src/ (tsx) and dist/. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_organizations_users': m0001,
};

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
