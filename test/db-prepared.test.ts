import { type Kysely, sql } from 'kysely';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createDatabase, pgTimestampToIso, withSessionOptions } from '../src/db/database.js';
import { prepared, ShapeCache } from '../src/db/prepared.js';
import { raiseMaintenanceWorkMem } from '../src/modules/leaks/leaks.bulk-load-pg.js';
import type { DB } from '../src/db/schema.js';
import { buildTestApp, json, TEST_PG_URL, testDatabaseUrl } from './helpers/build-app.js';

describe('PostgreSQL timestamps as text', () => {
  it('writes what Date.toISOString() writes, without parsing a Date when the zone is UTC', () => {
    const viaDate = (v: string, utc: boolean) => new Date(utc ? `${v}Z` : v).toISOString();
    const samples = [
      ['2026-11-22 22:31:14.641574+00', false],
      ['2026-11-22 22:31:14.9999+00', false],
      ['2026-11-22 22:31:14.5+00', false],
      ['2026-11-22 22:31:14+00', false],
      ['0999-01-01 00:00:00.000001+00', false],
      ['2026-11-22 23:31:14.641574+01', false],
      ['2026-11-22 16:01:14.641-05:30', false],
      ['2026-11-22 22:31:14.641574', true],
      ['2026-11-22 22:31:14', true],
    ] as const;
    for (const [v, utc] of samples) expect(pgTimestampToIso(v, utc), v).toBe(viaDate(v, utc));
    for (let i = 0; i < 2000; i++) {
      const d = new Date(Math.floor(Math.random() * 4e12)).toISOString();
      const micros = String(Math.floor(Math.random() * 1e6)).padStart(6, '0').replace(/0+$/, '');
      const v = `${d.slice(0, 10)} ${d.slice(11, 19)}${micros ? `.${micros}` : ''}`;
      expect(pgTimestampToIso(`${v}+00`, false)).toBe(viaDate(`${v}+00`, false));
      expect(pgTimestampToIso(v, true)).toBe(viaDate(v, true));
    }
    expect(pgTimestampToIso('2026-11-22 22:31:14.5+00', false)).toBe('2026-11-22T22:31:14.500Z');
  });
});

describe('configuration of prepared statements', () => {
  it('is on by default and turned off by THREATMON_PG_PREPARED_STATEMENTS=false', () => {
    expect(loadConfig({}).pgPreparedStatements).toBe(true);
    expect(loadConfig({ THREATMON_PG_PREPARED_STATEMENTS: 'false' }).pgPreparedStatements).toBe(false);
    expect(() => loadConfig({ THREATMON_PG_PREPARED_STATEMENTS: 'maybe' })).toThrow(/THREATMON_PG_PREPARED_STATEMENTS/);
  });
});

describe.skipIf(!TEST_PG_URL)('PostgreSQL prepared statements', () => {
  const closing: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  async function open(pgPreparedStatements: boolean) {
    const database = createDatabase({ databaseUrl: await testDatabaseUrl(), databaseKind: 'postgres', pgPreparedStatements });
    closing.push(() => database.close());
    const db = database.db as unknown as Kysely<{ things: { id: number; name: string; extra?: string | null } }>;
    await sql`create table things (id integer primary key, name text not null)`.execute(db);
    await db.insertInto('things').values({ id: 1, name: 'a' }).execute();
    return db;
  }

  const keptStatements = async (db: Kysely<never>) =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map((r) => r.statement);

  it('keeps each query text prepared on its connection, and runs it again after a migration changed what it returns', async () => {
    const db = await open(true);
    // One connection throughout: prepared statements belong to a session.
    await db.connection().execute(async (conn) => {
      const read = () => conn.selectFrom('things').selectAll().where('id', '=', 1).execute();
      expect(await read()).toEqual([{ id: 1, name: 'a' }]);
      expect(await read()).toEqual([{ id: 1, name: 'a' }]);
      expect(await keptStatements(conn as never)).toContain('select * from "things" where "id" = $1');
      // PostgreSQL refuses a kept plan whose columns changed ("cached plan must not change result type").
      await sql`alter table things add column extra text`.execute(conn);
      expect(await read()).toEqual([{ id: 1, name: 'a', extra: null }]);
      // Inside a transaction the statement cannot be dropped: that one attempt fails, the next works.
      await sql`alter table things drop column extra`.execute(conn);
      await sql`begin`.execute(conn);
      await expect(read()).rejects.toThrow(/cached plan must not change result type/);
      await sql`rollback`.execute(conn);
      expect(await read()).toEqual([{ id: 1, name: 'a' }]);
    });
  });

  it('opens each session without JIT or parallel workers, and with the work_mem that keeps a large full-text bitmap exact', async () => {
    const db = await open(true);
    const settings = await sql<{ jit: string; work_mem: string; workers: string }>`select current_setting('jit') as jit, current_setting('work_mem') as work_mem,
      current_setting('max_parallel_workers_per_gather') as workers`.execute(db);
    expect(settings.rows).toEqual([{ jit: 'off', work_mem: '32MB', workers: '0' }]);
    // The URL's own options follow, and win for a setting they give again.
    expect(withSessionOptions('postgres://u@h:5432/db?options=-c%20work_mem%3D64MB&sslmode=disable')).toBe(
      'postgres://u@h:5432/db?options=-c+jit%3Doff+-c+work_mem%3D32MB+-c+max_parallel_workers_per_gather%3D0+-c+work_mem%3D64MB&sslmode=disable',
    );
  });

  it('builds a bulk load\'s indexes with at least 256MB of maintenance_work_mem, or more where the session has it, split between builds side by side', async () => {
    const db = await open(true);
    await db.connection().execute(async (conn) => {
      await sql`set maintenance_work_mem = '64MB'`.execute(conn);
      expect(await raiseMaintenanceWorkMem(conn)).toBe('256MB');
      await sql`set maintenance_work_mem = '1GB'`.execute(conn);
      expect(await raiseMaintenanceWorkMem(conn)).toBe('1GB');
      expect(await raiseMaintenanceWorkMem(conn, 2)).toBe('512MB');
      await sql`set maintenance_work_mem = '64MB'`.execute(conn);
      expect(await raiseMaintenanceWorkMem(conn, 2)).toBe('128MB');
      await sql`reset maintenance_work_mem`.execute(conn);
    });
  });

  it('runs every statement unnamed when turned off', async () => {
    const db = await open(false);
    await db.connection().execute(async (conn) => {
      expect(await conn.selectFrom('things').select('name').execute()).toEqual([{ name: 'a' }]);
      expect(await keptStatements(conn as never)).toEqual([]);
    });
  });
});

describe('queries compiled once (db/prepared.ts)', () => {
  it('binds each call its own arguments, keeps constants, and refuses an argument it cannot bind as it is', async () => {
    const t = await buildTestApp();
    try {
      const org = await t.createOrg('enterprise', 'prepared');
      const other = await t.createOrg('enterprise', 'prepared-other');
      const mk = async (o: typeof org, title: string) =>
        json(await t.as(o.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title, severity: 'high' } })).id as string;
      const a = await mk(org, 'first');
      const b = await mk(org, 'second');
      const c = await mk(other, 'elsewhere');
      const byId = prepared((db: Kysely<DB>, orgId: string, id: string) =>
        db.selectFrom('incidents').select(['id', 'title']).where('organization_id', '=', orgId).where('severity', '=', 'high').where('id', '=', id),
      );
      expect(await byId(t.db, org.id, a)).toEqual([{ id: a, title: 'first' }]);
      expect(await byId(t.db, org.id, b)).toEqual([{ id: b, title: 'second' }]);
      // Another organization's id finds nothing: both arguments are bound on every call.
      expect(await byId(t.db, org.id, c)).toEqual([]);
      expect(await byId(t.db, other.id, c)).toEqual([{ id: c, title: 'elsewhere' }]);
      // Inside a transaction too.
      expect(await t.db.transaction().execute((trx) => byId(trx, org.id, b))).toEqual([{ id: b, title: 'second' }]);
      const transformed = prepared((db: Kysely<DB>, title: string) => db.selectFrom('incidents').select('id').where('title', 'like', `%${title}%`));
      await expect(transformed(t.db, 'first')).rejects.toThrow(/not bound as plain values/);
    } finally {
      await t.close();
    }
  });

  it('ShapeCache: builds each shape once, binds each call its values, and builds anew a shape it cannot bind', async () => {
    const t = await buildTestApp();
    try {
      const org = await t.createOrg('enterprise', 'shapes');
      const other = await t.createOrg('enterprise', 'shapes-other');
      const mk = async (o: typeof org, title: string, severity: string) =>
        json(await t.as(o.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title, severity } })).id as string;
      const a = await mk(org, 'alpha', 'high');
      const b = await mk(org, 'beta', 'low');
      const c = await mk(other, 'gamma', 'high');
      const cache = new ShapeCache();
      let builds = 0;
      type Filters = { org: string; severities: string[] | null; title?: string; like?: boolean; limit: number };
      const find = (f: Filters) =>
        cache.run(t.db, 'incidents', f, (v) => {
          builds++;
          let q = t.db.selectFrom('incidents').select('id').where('organization_id', '=', v.org);
          if (v.severities) q = q.where('severity', 'in', v.severities);
          // Transformed: this shape's placeholder does not reach the parameters as it is.
          if (v.title !== undefined) q = v.like ? q.where('title', 'like', `%${v.title}%`) : q.where('title', '=', v.title);
          return q.orderBy('title').limit(v.limit);
        });
      const ids = async (f: Filters) => (await find(f)).map((r) => r.id);
      expect(await ids({ org: org.id, severities: null, limit: 10 })).toEqual([a, b]);
      expect(await ids({ org: org.id, severities: null, limit: 1 })).toEqual([a]);
      // Another organization's value, the same shape: bound, not the first call's.
      expect(await ids({ org: other.id, severities: null, limit: 10 })).toEqual([c]);
      expect(builds).toBe(1);
      // A list of another length, a null turned into a list: other shapes, each built once.
      expect(await ids({ org: org.id, severities: ['low'], limit: 10 })).toEqual([b]);
      expect(await ids({ org: org.id, severities: ['high'], limit: 10 })).toEqual([a]);
      expect(await ids({ org: org.id, severities: ['low', 'high'], limit: 10 })).toEqual([a, b]);
      expect(builds).toBe(3);
      expect(await ids({ org: org.id, severities: null, title: 'beta', limit: 10 })).toEqual([b]);
      expect(await ids({ org: org.id, severities: null, title: 'alpha', limit: 10 })).toEqual([a]);
      expect(builds).toBe(4);
      // A value transformed in the SQL: right answers, built with the values each time.
      expect(await ids({ org: org.id, severities: null, title: 'lph', like: true, limit: 10 })).toEqual([a]);
      expect(await ids({ org: org.id, severities: null, title: 'et', like: true, limit: 10 })).toEqual([b]);
      expect(builds).toBe(4 + 1 + 2);
    } finally {
      await t.close();
    }
  });

  it('reads at once on SQLite outside a transaction, and never inside another caller\'s open transaction', async () => {
    const t = await buildTestApp();
    try {
      const org = await t.createOrg('enterprise', 'direct');
      const nameOf = prepared((db: Kysely<DB>, orgId: string) => db.selectFrom('organizations').select('name').where('id', '=', orgId));
      const viaKysely = vi.spyOn(t.db, 'executeQuery');
      expect(await nameOf(t.db, org.id)).toEqual([{ name: 'direct' }]);
      // SQLite runs it on the connection; PostgreSQL through Kysely as before.
      expect(viaKysely).toHaveBeenCalledTimes(t.app.deps.database.dialect === 'sqlite' ? 0 : 1);
      viaKysely.mockRestore();
      // A read while a transaction (later rolled back) holds the connection must not see its change.
      let read: Promise<unknown> | undefined;
      const rolledBack = await t.db
        .transaction()
        .execute(async (trx) => {
          await trx.updateTable('organizations').set({ name: 'never committed' }).where('id', '=', org.id).execute();
          read = nameOf(t.db, org.id);
          await new Promise((resolve) => setImmediate(resolve));
          throw new Error('rolled back');
        })
        .catch((err: Error) => err.message);
      expect(rolledBack).toBe('rolled back');
      expect(await read).toEqual([{ name: 'direct' }]);
    } finally {
      await t.close();
    }
  });
});
