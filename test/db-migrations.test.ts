import fc from 'fast-check';
import { type Kysely, Migrator, PostgresAdapter, sql } from 'kysely';
import { leakRecordKey } from '../src/db/migrations/0007_leak_record_keys.js';
import { AuditLog } from '../src/modules/audit/audit.repository.js';
import { createHooks } from '../src/modules/hooks.js';
import { createLeaksModule } from '../src/modules/leaks/index.js';
import { parseLeakSearch } from '../src/modules/leaks/leaks.lists.js';
import { normaliseRecord, parseFullText, recordKey, sha1Hex } from '../src/domain/leak-record.js';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { migrateToLatest, MIGRATIONS } from '../src/db/migrator.js';
import { type AppDeps, createDeps } from '../src/deps.js';
import { JWT_SECRET, TEST_PG_URL, testDatabaseUrl } from './helpers/build-app.js';

/**
 * The leaks service alone, as on a database migrated part of the way: the other modules' hooks
 * (monitoring's matcher) would read tables of later migrations.
 */
const leaksOf = (deps: AppDeps) => createLeaksModule({ ...deps, audit: new AuditLog(deps.clock, deps.newId), hooks: createHooks() }).service;

/** Applies the migrations named before `first`, as migrateToLatest does (on PostgreSQL, bookkeeping in the connection's own schema). */
async function migrateUntil(db: Kysely<any>, first: string) {
  const until = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < first));
  const migrationTableSchema = db.getExecutor().adapter instanceof PostgresAdapter ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s : undefined;
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => until }, migrationTableSchema }).migrateToLatest();
  expect(error).toBeUndefined();
}

/** Columns of leak_records that later migrations add and fill in, as today's ingest writes them. */
const LATER_COLUMNS = [
  ['email_domain_rev', 'text'],
  ['severity', "text not null default 'low'"],
  ['password_ntlm', 'text'],
] as const;

describe('data migrations', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanup) await c();
  });

  /** A new database migrated up to `first` (not included), holding one leak source, with the leak service over it. */
  async function beforeMigration(first: string, source: { id: string; name: string }) {
    const deps = createDeps(loadConfig({ THREATMON_DATABASE_URL: await testDatabaseUrl(), THREATMON_JWT_SECRET: JWT_SECRET }));
    cleanup.push(() => deps.database.close());
    const db = deps.database.db as unknown as Kysely<any>;
    await migrateUntil(db, first);
    const now = new Date().toISOString();
    await db.insertInto('leak_sources').values({ ...source, description: '', data_classes: '[]', is_verified: false, created_at: now, updated_at: now }).execute();
    const leaks = leaksOf(deps);
    // Today's ingest writes the columns of today: those added by later migrations are there while it
    // runs, and gone again before they are migrated (their migrations fill them in for these records).
    const ingest: typeof leaks.ingest = async (...args) => {
      const missing: string[] = [];
      for (const [column, type] of LATER_COLUMNS) {
        if (!(await sql`select ${sql.ref(column)} from leak_records limit 0`.execute(db).then(() => true, () => false))) missing.push(`${column} ${type}`);
      }
      for (const column of missing) await sql.raw(`alter table leak_records add column ${column}`).execute(db);
      try {
        return await leaks.ingest(...args);
      } finally {
        for (const column of missing) await sql.raw(`alter table leak_records drop column ${column.split(' ')[0]}`).execute(db);
      }
    };
    return { db, raw: deps.database.sqlite, leaks: Object.assign(Object.create(leaks) as typeof leaks, { ingest }), actor: { p: null, ip: null } };
  }

  /**
   * A bulk load begun as the code before migration 0011 began one (no process recorded as taking
   * part): its row, and the indexes and full-text insert trigger set aside. The code of today needs
   * the schema of today.
   */
  function beginOldBulkLoad(raw: NonNullable<AppDeps['database']['sqlite']>) {
    const objects = raw
      .prepare("select type, name, sql from sqlite_master where tbl_name = 'leak_records' and sql is not null and (type = 'index' or (type = 'trigger' and name = 'leak_records_fts_insert'))")
      .all() as Array<{ type: string; name: string; sql: string }>;
    const { max } = raw.prepare('select coalesce(max(rowid), 0) as max from leak_records').get() as { max: number };
    raw.prepare('insert into leak_bulk_loads (id, from_rowid, dropped_indexes, started_at) values (1, ?, ?, ?)').run(max, JSON.stringify(objects), new Date().toISOString());
    for (const { type, name } of objects) raw.exec(`drop ${type} "${name}"`);
  }

  it('0012 keeps every user whose name clashes ignoring case: the oldest keeps it, the others are renamed and audited', async () => {
    const deps = createDeps(loadConfig({ THREATMON_DATABASE_URL: await testDatabaseUrl() }));
    cleanup.push(() => deps.database.close());
    const db = deps.database.db as unknown as Kysely<any>;
    await migrateUntil(db, '0012');
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const orgs = ['00000000-0000-7000-8000-0000000000a1', '00000000-0000-7000-8000-0000000000a2'];
    for (const [i, id] of orgs.entries()) await db.insertInto('organizations').values({ id, name: `org${i}`, plan: 'starter', created_at: at(0), updated_at: at(0) }).execute();
    const users: Array<[string, string, number, string]> = [
      ['00000000-0000-7000-8000-0000000000b1', 'Alice', 1, orgs[0]!],
      ['00000000-0000-7000-8000-0000000000b2', 'ALICE', 2, orgs[1]!],
      ['00000000-0000-7000-8000-0000000000b3', 'alice-2', 3, orgs[0]!],
      ['00000000-0000-7000-8000-0000000000b4', 'alice', 4, orgs[1]!],
      ['00000000-0000-7000-8000-0000000000b5', 'bob', 5, orgs[0]!],
    ];
    for (const [id, username, s, org] of users) {
      await db
        .insertInto('users')
        .values({ id, organization_id: org, username, email: `${id}@x.example`, password_hash: `hash-${id}`, role: 'viewer', created_at: at(s), updated_at: at(s) })
        .execute();
    }
    await migrateToLatest(db);
    const after = await db.selectFrom('users').select(['id', 'username', 'password_hash']).orderBy('created_at').execute();
    expect(after.map((u) => u.username)).toEqual(['Alice', 'ALICE-3', 'alice-2', 'alice-4', 'bob']);
    expect(after.map((u) => u.password_hash)).toEqual(users.map(([id]) => `hash-${id}`));
    const audit = await db.selectFrom('audit_log').select(['organization_id', 'target_id', 'changes']).where('action', '=', 'user.renamed').orderBy('target_id').execute();
    expect(audit.map((a) => [a.organization_id, a.target_id, JSON.parse(a.changes).username])).toEqual([
      [orgs[1], users[1]![0], { from: 'ALICE', to: 'ALICE-3' }],
      [orgs[1], users[3]![0], { from: 'alice', to: 'alice-4' }],
    ]);
    // The index keeps them apart from now on.
    await expect(
      db.insertInto('users').values({ id: '00000000-0000-7000-8000-0000000000b9', organization_id: orgs[0], username: 'BOB', email: 'b@x.example', password_hash: 'h', role: 'viewer', created_at: at(9), updated_at: at(9) }).execute(),
    ).rejects.toThrow();
  });

  it('0005 counts the records of each domain, 0006 rewrites full-text words of existing records, 0008 gathers their words (PostgreSQL)', async () => {
    const deps = createDeps(loadConfig({ THREATMON_DATABASE_URL: await testDatabaseUrl() }));
    cleanup.push(() => deps.database.close());
    const { db } = deps.database;
    await migrateUntil(db, '0005');
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
    // Rows as 0006 stored them (a text fingerprint): below the typed schema of today.
    await (db as unknown as Kysely<any>)
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
        ? sql<{ n: number }>`select count(*)::int as n from leak_records where to_tsvector('simple', search_text) @@ to_tsquery('simple', 'harris <-> 6915')`
        : sql<{ n: number }>`select count(*) as n from leak_records_fts where leak_records_fts match '"harris 6915"'`;
    expect(Number((await match.execute(db)).rows[0]?.n)).toBe(1);
    // 0008 (PostgreSQL): the words of records stored before it complete prefixes.
    if (deps.database.dialect === 'postgres') {
      const leaks = leaksOf(deps);
      expect(await leaks.expandPrefixes(parseFullText('har* corp1*'))).toEqual([
        { kind: 'prefix', words: ['har'], completions: ['harris'] },
        { kind: 'prefix', words: ['corp', '1'], completions: ['11'] },
      ]);
    }
  });

  it("0007's frozen key function gives the keys the app makes today, so keys stored by either match", () => {
    fc.assert(
      fc.property(fc.uuid(), fc.string({ unit: 'binary', maxLength: 80 }), (source, fingerprint) => {
        expect(leakRecordKey(source, fingerprint).equals(recordKey(source, fingerprint))).toBe(true);
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('0007 keys records by source and content in 16 bytes, keeping rowids, indexes, triggers and idempotent re-ingest', async () => {
    const deps = createDeps(loadConfig({ THREATMON_DATABASE_URL: await testDatabaseUrl(), THREATMON_JWT_SECRET: JWT_SECRET }));
    cleanup.push(() => deps.database.close());
    const db = deps.database.db as unknown as Kysely<any>;
    await migrateUntil(db, '0007');
    const now = new Date().toISOString();
    const sources = ['00000000-0000-7000-8000-00000000000a', '00000000-0000-7000-8000-00000000000b'];
    for (const [i, id] of sources.entries()) {
      await db.insertInto('leak_sources').values({ id, name: `Old ${i}`, description: '', data_classes: '[]', is_verified: false, created_at: now, updated_at: now }).execute();
    }
    const normalised = (email: string) => {
      const r = normaliseRecord({ email });
      if (!r.ok) throw new Error('invalid');
      return r.record;
    };
    const same = normalised('dora@keys.example');
    // The same record in both sources, as 0006 stored it: the hex content fingerprint, unique per source.
    const rows = sources.map((source_id, i) => ({
      id: `00000000-0000-7000-8000-00000000002${i}`,
      source_id,
      email: same.email,
      domain: same.domain,
      domain_rev: same.domain_rev,
      fingerprint: same.fingerprint,
      extra: '{}',
      search_text: same.search_text,
      created_at: now,
    }));
    await db.insertInto('leak_records').values(rows).execute();
    const raw = deps.database.sqlite;
    const schemaOf = () => raw?.prepare("select type, name, sql from sqlite_master where tbl_name = 'leak_records' and type in ('index', 'trigger') order by type, name").all();
    const rowids = () => raw?.prepare('select rowid, id from leak_records order by rowid').all();
    const schemaBefore = schemaOf();
    const rowidsBefore = rowids();

    // 0007 alone: later migrations change these indexes again.
    await migrateUntil(db, '0008');
    const stored = (await db.selectFrom('leak_records').select(['id', 'source_id', 'fingerprint']).orderBy('id').execute()) as Array<{ source_id: string; fingerprint: Uint8Array }>;
    expect(stored.map((r) => Buffer.from(r.fingerprint).toString('hex'))).toEqual(sources.map((s) => recordKey(s, same.fingerprint).toString('hex')));
    expect(stored.every((r) => r.fingerprint.length === 16)).toBe(true);
    if (raw) {
      // Same rowids (the full-text index refers to them), same indexes and triggers; the new uniqueness is an automatic index.
      expect(rowids()).toEqual(rowidsBefore);
      expect(schemaOf()?.filter((o) => (o as { sql: string | null }).sql !== null)).toEqual(schemaBefore?.filter((o) => (o as { sql: string | null }).sql !== null));
      raw.exec("insert into leak_records_fts(leak_records_fts) values ('integrity-check')");
      expect((raw.prepare("select count(*) as n from leak_records_fts where leak_records_fts match 'dora'").get() as { n: number }).n).toBe(2);
      expect(raw.pragma('foreign_key_check')).toEqual([]);
    }

    // Re-ingesting what was stored before the migration adds nothing; a new record is added, in one source only.
    await migrateToLatest(db);
    const leaks = leaksOf(deps);
    const actor = { p: null, ip: null };
    const again = await leaks.ingest(sources[0] as string, [{ index: 0, value: { email: 'DORA@keys.example' } }, { index: 1, value: { email: 'eve@keys.example' } }], actor);
    expect(again).toMatchObject({ accepted: 1, duplicates: 1 });
    expect(await leaks.ingest(sources[1] as string, [{ index: 0, value: { email: 'eve@keys.example' } }], actor)).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(await leaks.ingest(sources[1] as string, [{ index: 0, value: { email: 'eve@keys.example' } }], actor)).toMatchObject({ accepted: 0, duplicates: 1 });
    // Keys stored by ingestion are the same 16 bytes, each source's keys starting with the source's 4.
    const eve = normalised('eve@keys.example');
    const keys = (await db.selectFrom('leak_records').select(['source_id', 'fingerprint']).where('email', '=', 'eve@keys.example').orderBy('source_id').execute()) as Array<{
      source_id: string;
      fingerprint: Uint8Array;
    }>;
    expect(keys.map((k) => Buffer.from(k.fingerprint).toString('hex'))).toEqual(sources.map((s) => recordKey(s, eve.fingerprint).toString('hex')));
    expect(Buffer.from(keys[0]?.fingerprint ?? []).subarray(0, 4)).toEqual(Buffer.from(stored[0]?.fingerprint ?? []).subarray(0, 4));
    expect(Buffer.from(keys[0]?.fingerprint ?? []).subarray(0, 4)).not.toEqual(Buffer.from(keys[1]?.fingerprint ?? []).subarray(0, 4));
  });
  it.skipIf(Boolean(TEST_PG_URL))('0009 (SQLite) rebuilds the full-text index with three-letter prefixes, a bulk load in progress included once', async () => {
    const sourceId = '00000000-0000-7000-8000-00000000000c';
    const { db, raw: sqlite, leaks, actor } = await beforeMigration('0009', { id: sourceId, name: 'Prefixes' });
    const raw = sqlite as NonNullable<typeof sqlite>;
    const records = (...emails: string[]) => emails.map((email, index) => ({ index, value: { email } }));
    await leaks.ingest(sourceId, records('jamie@prefix.example', 'james@prefix.example'), actor);
    beginOldBulkLoad(raw);
    await leaks.ingest(sourceId, records('jamal@prefix.example', 'jam@prefix.example', 'jan@prefix.example'), actor);
    const matches = (q: string) => (raw.prepare('select count(*) as n from leak_records_fts where leak_records_fts match ?').get(q) as { n: number }).n;
    expect(matches('"jam"*')).toBe(2); // the bulk load's records are not indexed yet

    expect(await migrateToLatest(db)).toContain('0009_leak_fts_prefix_index');
    expect((raw.prepare("select sql from sqlite_master where name = 'leak_records_fts'").get() as { sql: string }).sql).toContain("prefix='3'");
    expect(matches('"jam"*')).toBe(4);
    // A record of the load deleted before it ends leaves the index with it.
    raw.prepare("delete from leak_records where email = 'jamal@prefix.example'").run();
    expect(await leaks.bulk.finish()).toBe(true);
    raw.exec("insert into leak_records_fts(leak_records_fts, rank) values ('integrity-check', 1)");
    expect(matches('"jam"*')).toBe(3);
    expect(matches('"ja"*')).toBe(4);
    expect(matches('"jami"*')).toBe(1);
    expect(matches('prefix')).toBe(4);
    // Records ingested from now on are indexed by the trigger, prefixes included.
    await leaks.ingest(sourceId, records('jameson@prefix.example'), actor);
    expect(matches('"jam"*')).toBe(4);
    raw.exec("insert into leak_records_fts(leak_records_fts, rank) values ('integrity-check', 1)");
  });

  it('0010 leaves records without a value out of the exact-match indexes, which still serve each search; SQLite drops full-text column sizes, a bulk load in progress included', async () => {
    const sourceId = '00000000-0000-7000-8000-00000000000d';
    const { db, raw, leaks, actor } = await beforeMigration('0010', { id: sourceId, name: 'Sparse' });
    const values = [
      { email: 'full@sparse.example', username: 'Full', phone: '+441234567890', ip: '203.0.113.7', password: 'hunter22' },
      { email: 'bare@sparse.example' },
      { username: 'only-a-name' },
    ];
    await leaks.ingest(sourceId, values.slice(0, 2).map((value, index) => ({ index, value })), actor);
    // SQLite: a bulk load in progress has the indexes set aside when the migration runs.
    if (raw) beginOldBulkLoad(raw);
    await leaks.ingest(sourceId, [{ index: 0, value: values[2] }], actor);
    expect(await migrateToLatest(db)).toContain('0010_leak_lean_indexes');
    if (raw) {
      expect(await leaks.bulk.finish()).toBe(true);
      expect((raw.prepare("select sql from sqlite_master where name = 'leak_records_fts'").get() as { sql: string }).sql).toContain('columnsize=0');
      raw.exec("insert into leak_records_fts(leak_records_fts, rank) values ('integrity-check', 1)");
      expect((raw.prepare("select count(*) as n from leak_records_fts where leak_records_fts match 'sparse'").get() as { n: number }).n).toBe(2);
      expect((raw.prepare("select count(*) as n from leak_records_fts where leak_records_fts match 'name'").get() as { n: number }).n).toBe(1);
    }
    const definitions = raw
      ? (raw.prepare("select name, sql as definition from sqlite_master where type = 'index' and tbl_name = 'leak_records' and sql is not null").all() as Array<{ name: string; definition: string }>)
      : (await sql<{ name: string; definition: string }>`select indexname as name, indexdef as definition from pg_indexes where tablename = 'leak_records' and schemaname = current_schema()`.execute(db)).rows;
    const partial = Object.fromEntries(definitions.map((d) => [d.name, /where\s+\(?\s*\(?\s*"?(\w+)"?\s+is\s+not\s+null/i.exec(d.definition)?.[1] ?? null]));
    expect(partial).toMatchObject({
      leak_records_email_idx: 'email',
      leak_records_username_idx: 'username_lower',
      leak_records_phone_idx: 'phone',
      leak_records_domain_rev_idx: 'domain_rev',
      leak_records_ip_key_idx: 'ip_key',
      leak_records_sha1_idx: 'password_sha1',
      leak_records_source_created_idx: null,
    });
    if (raw) {
      // The searches' own shapes (=, in, ranges) are served by the partial indexes.
      const plan = (q: string, ...params: unknown[]) => (raw.prepare(`explain query plan ${q}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
      expect(plan('select count(*) from leak_records where email = ?', 'x')).toContain('leak_records_email_idx');
      expect(plan('select id from leak_records where username_lower = ? order by created_at desc, id desc limit 10', 'x')).toContain('leak_records_username_idx');
      expect(plan('select count(*) from leak_records where phone in (?, ?)', '1', '+1')).toContain('leak_records_phone_idx');
      expect(plan('select count(*) from leak_records where domain_rev >= ? and domain_rev < ?', 'a', 'b')).toContain('leak_records_domain_rev_idx');
      expect(plan('select count(*) from leak_records where ip_key >= ? and ip_key <= ?', 'a', 'b')).toContain('leak_records_ip_key_idx');
      expect(plan('select password_sha1, count(*) from leak_records where password_sha1 >= ? and password_sha1 < ? group by password_sha1', 'A', 'B')).toContain('leak_records_sha1_idx');
    }
    // Every record is still found by what it has.
    const found = async (where: Record<string, unknown>) => (await leaks.search(parseLeakSearch(where))).count;
    expect(await found({ email: 'full@sparse.example' })).toBe(1);
    expect(await found({ username: 'only-a-name' })).toBe(1);
    expect(await found({ phone: '441234567890' })).toBe(1);
    expect(await found({ ip: '203.0.113.0/24' })).toBe(1);
    expect(await found({ domain: 'sparse.example' })).toBe(2);
    expect(await leaks.passwordRange(sha1Hex('hunter22').slice(0, 5))).toContain(`${sha1Hex('hunter22').slice(5)}:1`);
  });

  it("0020 gives each alert its record's JSON, as GET /leaks/records/<id>/ shows the record", async () => {
    const source = { id: '00000000-0000-7000-8000-0000000000c1', name: 'Dump 0020' };
    const { db, leaks, actor } = await beforeMigration('0020', source);
    await leaks.ingest(source.id, [{ index: 0, value: { email: 'a@m0020.example', password: 'pw-0020', extra: { k: 'v' }, leaked_at: '2025-01-02T03:04:05.678Z' } }, { index: 1, value: { username: 'bare-0020' } }], actor);
    const at = new Date().toISOString();
    const org = '00000000-0000-7000-8000-0000000000c2';
    const monitor = '00000000-0000-7000-8000-0000000000c3';
    await db.insertInto('organizations').values({ id: org, name: 'org0020', plan: 'starter', created_at: at, updated_at: at }).execute();
    await db.insertInto('monitors').values({ id: monitor, organization_id: org, name: 'm', description: '', type: 'keyword', terms: '["0020"]', severity: 'high', status: 'active', created_by: null, created_at: at, updated_at: at }).execute();
    const records = await db.selectFrom('leak_records').select('id').orderBy('id').execute();
    expect(records).toHaveLength(2);
    for (const [i, r] of records.entries()) {
      await db
        .insertInto('monitor_alerts')
        .values({ id: `00000000-0000-7000-8000-0000000000d${i}`, organization_id: org, monitor_id: monitor, leak_record_id: r.id, matched_term: '0020', matched_field: 'email', severity: 'high', status: 'new', note: '', created_at: at, updated_at: at })
        .execute();
    }
    expect(await migrateToLatest(db)).toContain('0020_monitor_alert_record_json');
    const kept = await db.selectFrom('monitor_alerts').select(['leak_record_id', 'record_json']).execute();
    expect(kept).toHaveLength(2);
    for (const k of kept) expect(JSON.parse(k.record_json)).toEqual(JSON.parse(await leaks.getRecord(k.leak_record_id)));
  });

  it("0021 keeps each existing record's e-mail domain where its domain field differs, for domain scans", async () => {
    const source = { id: '00000000-0000-7000-8000-0000000000e1', name: 'Dump 0021' };
    const { db, leaks, actor } = await beforeMigration('0021', source);
    const values = [
      { email: 'alice@acme.example', domain: 'login.bank.example' },
      { email: 'bob@acme.example' },
      { email: 'carol@sub.acme.example', domain: 'acme.example' },
      { username: 'no-mail', domain: 'acme.example' },
    ];
    await leaks.ingest(source.id, values.map((value, index) => ({ index, value })), actor);
    expect(await migrateToLatest(db)).toContain('0021_leak_email_domains');
    const rows = await db.selectFrom('leak_records').select(['email', 'username', 'email_domain_rev']).orderBy('email').execute();
    expect(Object.fromEntries(rows.map((r) => [r.email ?? r.username, r.email_domain_rev]))).toEqual({
      'alice@acme.example': 'example.acme.',
      'bob@acme.example': null,
      'carol@sub.acme.example': 'example.acme.sub.',
      'no-mail': null,
    });
  });

  it('0023 gives each existing record the severity of what it exposes, shows it in alerts, and keeps monitors\' severities', async () => {
    const source = { id: '00000000-0000-7000-8000-0000000000f1', name: 'Dump 0023' };
    const { db, leaks, actor } = await beforeMigration('0023', source);
    const values = [
      { email: 'low@m0023.example', extra: { note: 'x' } },
      { username: 'medium-0023', password_sha1: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3' },
      { username: 'medium-hash-0023', extra: { password_hash: '5f4dcc3b5aa765d61d8327deb882cf99', hash_type: 'md5' } },
      { email: 'high@m0023.example', password: 'pw-0023' },
      { email: 'critical@m0023.example', password: 'pw-0023', extra: { url: 'https://m0023.example/' } },
      { username: 'app-0023', password: 'pw-0023', extra: { app: 'com.m0023.app' } },
    ];
    await leaks.ingest(source.id, values.map((value, index) => ({ index, value })), actor);
    const at = new Date().toISOString();
    const org = '00000000-0000-7000-8000-0000000000f2';
    const monitor = '00000000-0000-7000-8000-0000000000f3';
    await db.insertInto('organizations').values({ id: org, name: 'org0023', plan: 'starter', created_at: at, updated_at: at }).execute();
    await db.insertInto('monitors').values({ id: monitor, organization_id: org, name: 'm', description: '', type: 'keyword', terms: '["0023"]', severity: 'high', status: 'active', created_by: null, created_at: at, updated_at: at }).execute();
    const critical = await db.selectFrom('leak_records').select('id').where('email', '=', 'critical@m0023.example').executeTakeFirstOrThrow();
    await db
      .insertInto('monitor_alerts')
      .values({ id: '00000000-0000-7000-8000-0000000000f4', organization_id: org, monitor_id: monitor, leak_record_id: critical.id, matched_term: '0023', matched_field: 'email', severity: 'high', status: 'new', note: '', created_at: at, updated_at: at, record_json: '{"email":"critical@m0023.example"}' })
      .execute();

    expect(await migrateToLatest(db)).toContain('0023_severity_by_exposure');
    const rows = await db.selectFrom('leak_records').select(['email', 'username', 'severity']).execute();
    expect(Object.fromEntries(rows.map((r) => [r.email ?? r.username, r.severity]))).toEqual({
      'low@m0023.example': 'low',
      'medium-0023': 'medium',
      'medium-hash-0023': 'medium',
      'high@m0023.example': 'high',
      'critical@m0023.example': 'critical',
      'app-0023': 'critical',
    });
    const alert = await db.selectFrom('monitor_alerts').select(['severity', 'record_json']).executeTakeFirstOrThrow();
    expect(alert.severity).toBe('high');
    expect(JSON.parse(alert.record_json)).toEqual({ email: 'critical@m0023.example', severity: 'critical' });
    expect(await db.selectFrom('monitors').select('severity').where('id', '=', monitor).executeTakeFirst()).toEqual({ severity: 'high' });
    // A monitor may now be without one.
    await db.updateTable('monitors').set({ severity: null }).where('id', '=', monitor).execute();
  });

  it.runIf(Boolean(TEST_PG_URL))('0029 (PostgreSQL) indexes the full-text expression instead of a stored vector column: records stored before it are still found through the index', async () => {
    const source = { id: '00000000-0000-7000-8000-000000000291', name: 'Dump 0029' };
    const { db, leaks, actor } = await beforeMigration('0029', source);
    await leaks.ingest(source.id, [{ index: 0, value: { email: 'olga.harris@m0029.example', full_name: 'Olga Harris' } }, { index: 1, value: { username: 'other-0029' } }], actor);
    expect(await migrateToLatest(db)).toContain('0029_leak_search_expression');
    const columns = await sql<{ name: string }>`select attname as name from pg_attribute where attrelid = 'leak_records'::regclass and attnum > 0 and not attisdropped`.execute(db);
    expect(columns.rows.map((c) => c.name)).not.toContain('search_vector');
    expect((await leaks.search(parseLeakSearch({ q: '"olga harris"' }))).count).toBe(1);
    // The search's condition is the index's expression: the index answers it.
    const plan = await db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      return sql<{ 'QUERY PLAN': string }>`explain select id from leak_records where to_tsvector('simple', search_text) @@ to_tsquery('simple', 'olga <-> harris')`.execute(trx);
    });
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('leak_records_search_idx');
  });

  it.runIf(Boolean(TEST_PG_URL))('0030 (PostgreSQL) packs the B-tree indexes of leak records: those there are, and those a bulk load in progress has set aside', async () => {
    const source = { id: '00000000-0000-7000-8000-000000000301', name: 'Dump 0030' };
    const { db, leaks, actor } = await beforeMigration('0030', source);
    await leaks.ingest(source.id, [{ index: 0, value: { email: 'ivan.lee@m0030.example', phone: '+12025550130' } }], actor);
    // A bulk load in progress, as PgBulkLoads begins one: the phone index set aside by its definition.
    const phone = (await sql<{ sql: string }>`select pg_get_indexdef('leak_records_phone_idx'::regclass) as sql`.execute(db)).rows[0]!.sql;
    await sql`drop index leak_records_phone_idx`.execute(db);
    await sql`insert into leak_bulk_loads (id, from_rowid, dropped_indexes, started_at) values (1, 0, ${JSON.stringify([{ name: 'leak_records_phone_idx', sql: phone }])}, ${new Date().toISOString()})`.execute(db);

    expect(await migrateToLatest(db)).toContain('0030_leak_index_fillfactor');
    const options = async () =>
      Object.fromEntries(
        (await sql<{ name: string; options: string[] | null }>`select i.relname as name, i.reloptions as options from pg_index x join pg_class i on i.oid = x.indexrelid
          where x.indrelid = 'leak_records'::regclass`.execute(db)).rows.map((r) => [r.name, r.options]),
      );
    const before = await options();
    expect(before).toMatchObject({ leak_records_pkey: ['fillfactor=100'], leak_records_fingerprint_key: ['fillfactor=100'], leak_records_email_idx: ['fillfactor=100'] });
    expect(before.leak_records_search_idx).toBeNull(); // GIN: no fill factor
    const aside = JSON.parse((await sql<{ d: string }>`select dropped_indexes as d from leak_bulk_loads`.execute(db)).rows[0]!.d) as Array<{ sql: string }>;
    expect(aside[0]!.sql).toBe(phone.replace(' WHERE', " WITH (fillfactor='100') WHERE"));
    // The load's end builds it packed, and it answers as before.
    await sql.raw(aside[0]!.sql).execute(db);
    await sql`delete from leak_bulk_loads`.execute(db);
    expect((await options()).leak_records_phone_idx).toEqual(['fillfactor=100']);
    expect((await leaks.search(parseLeakSearch({ phone: '+12025550130' }))).count).toBe(1);
  });

  it('0031 keeps one version of each leak source identity in TAXII exposures, first and latest', async () => {
    const { db } = await beforeMigration('0031', { id: '00000000-0000-7000-8000-0000000001a1', name: 'Dump 0031' });
    const org = '00000000-0000-7000-8000-0000000001a2';
    const at = new Date().toISOString();
    await db.insertInto('organizations').values({ id: org, name: 'org0031', plan: 'starter', created_at: at, updated_at: at }).execute();
    const row = (stix: string, version: string, type = 'identity') => ({ organization_id: org, collection: 'exposures', stix_id: stix, type, version, added_us: null, first: true, superseded: false, object: JSON.stringify({ id: stix, created: version }) });
    await db.insertInto('taxii_objects').values([row('identity--a', '2026-01-01T00:00:00.000Z'), row('identity--a', '2026-01-02T00:00:00.000Z'), row('identity--a', '2026-01-03T00:00:00.000Z'), row('identity--b', '2026-01-01T00:00:00.000Z'), row('sighting--c', '2026-01-01T00:00:00.000Z', 'sighting'), row('sighting--c', '2026-01-02T00:00:00.000Z', 'sighting')]).execute();
    expect(await migrateToLatest(db)).toContain('0031_taxii_shared_once');
    const kept = await db.selectFrom('taxii_objects').select(['stix_id', 'version', 'first', 'superseded']).orderBy('stix_id').orderBy('version').execute();
    expect(kept.map((k) => [k.stix_id, k.version, Boolean(k.first), Boolean(k.superseded)])).toEqual([
      ['identity--a', '2026-01-01T00:00:00.000Z', true, false],
      ['identity--b', '2026-01-01T00:00:00.000Z', true, false],
      ['sighting--c', '2026-01-01T00:00:00.000Z', true, false],
      ['sighting--c', '2026-01-02T00:00:00.000Z', true, false],
    ]);
  });
});
