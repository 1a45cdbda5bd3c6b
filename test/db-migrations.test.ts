import { Migrator, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { migrateToLatest, MIGRATIONS } from '../src/db/migrator.js';
import { createDeps } from '../src/deps.js';
import { testDatabaseUrl } from './helpers/build-app.js';

describe('data migrations', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanup) await c();
  });

  it('0005 counts the records of each domain and 0006 rewrites full-text words of existing records', async () => {
    const deps = createDeps(loadConfig({ THREATMON_DATABASE_URL: await testDatabaseUrl() }));
    cleanup.push(() => deps.database.close());
    const { db } = deps.database;
    const until0004 = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < '0005'));
    // As migrateToLatest does: on PostgreSQL, the bookkeeping tables in the connection's own schema.
    const migrationTableSchema =
      deps.database.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s : undefined;
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => until0004 }, migrationTableSchema }).migrateToLatest();
    expect(error).toBeUndefined();
    const now = new Date().toISOString();
    await db.insertInto('leak_sources').values({ id: '00000000-0000-7000-8000-000000000001', name: 'Old', description: '', data_classes: '[]', is_verified: false, created_at: now, updated_at: now }).execute();
    const record = (n: number, email: string, domainRev: string, searchText: string) => ({
      id: `00000000-0000-7000-8000-00000000001${n}`,
      source_id: '00000000-0000-7000-8000-000000000001',
      email,
      domain: email.split('@')[1],
      domain_rev: domainRev,
      fingerprint: `fp${n}`,
      extra: '{}',
      // The old rule: the whole value, then its letter-and-digit words.
      search_text: searchText,
      created_at: now,
    });
    await db
      .insertInto('leak_records')
      .values([
        record(1, 'olga.harris6915@corp11.example', 'example.corp11.', 'olga.harris6915@corp11.example olga harris6915 corp11 example'),
        record(2, 'ann@corp11.example', 'example.corp11.', 'ann@corp11.example ann corp11 example'),
        record(3, 'bo@mail.corp11.example', 'example.corp11.mail.', 'bo@mail.corp11.example bo mail corp11 example'),
      ])
      .execute();

    await migrateToLatest(db);
    const counts = await db.selectFrom('leak_domain_counts').select(['key', 'n']).orderBy('key').execute();
    expect(counts.map((c) => [c.key, Number(c.n)])).toEqual([
      ['example.corp11.', 2],
      ['example.corp11.mail.', 1],
    ]);
    const texts = await db.selectFrom('leak_records').select('search_text').orderBy('id').execute();
    expect(texts.map((t) => t.search_text)).toEqual([
      'olga harris 6915 corp 11 example olga harris 6915 corp 11 example',
      'ann corp 11 example ann corp 11 example',
      'bo mail corp 11 example bo mail corp 11 example',
    ]);
    // The full-text index follows the rewritten words.
    const match =
      deps.database.dialect === 'postgres'
        ? sql<{ n: number }>`select count(*)::int as n from leak_records where search_vector @@ to_tsquery('simple', 'harris <-> 6915')`
        : sql<{ n: number }>`select count(*) as n from leak_records_fts where leak_records_fts match '"harris 6915"'`;
    expect(Number((await match.execute(db)).rows[0]?.n)).toBe(1);
  });
});
