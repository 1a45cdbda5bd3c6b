import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

/**
 * The no-plaintext rule of the leak corpus: a password sent for ingestion, accepted or refused,
 * appears in no response, no log line (the app's own logger at its most verbose) and no table
 * (full-text index included). Each password is sent one way only, so that a leak names its path.
 */
const PASSWORDS = {
  accepted: 'QuokkaVelvet#7301',
  badEmail: 'JackdawMarble#5522',
  withNul: 'OcelotTundra#8813\u0000',
  tooLong: `CaracalUmber#1145${'x'.repeat(1100)}`,
  ndjsonAccepted: 'PangolinSaffron#4410',
  ndjsonMalformed: 'TapirCobalt#6634',
  ndjsonBadField: 'IbexTopaz#7719',
  malformedBody: 'LemurQuartz#2287',
  viewer: 'NarwhalOchre#9156',
  noSource: 'WombatIndigo#3378',
  wrongSha1: 'PumaGarnet#5061',
};

/** Every 8-character piece of each password, lower-cased: a quoted fragment is a leak too. */
const pieces = Object.entries(PASSWORDS).flatMap(([name, pw]) => {
  const head = pw.replace(/\u0000|x{8,}/g, '');
  return Array.from({ length: head.length - 7 }, (_, i) => ({ name, piece: head.slice(i, i + 8).toLowerCase() }));
});

function leaked(text: string): string[] {
  const lower = text.toLowerCase();
  return [...new Set(pieces.filter((p) => lower.includes(p.piece)).map((p) => p.name))];
}

describe('leak corpus: no plaintext password anywhere', () => {
  let t: TestApp;
  let staff: User;
  let viewer: User;
  let sourceId: string;
  const logs: string[] = [];
  const bodies: string[] = [];

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_LOG_LEVEL: 'trace' }, { logger: undefined, logStream: { write: (line: string) => void logs.push(line) } });
    staff = (await t.createOrg('enterprise', 'platform', true)).owner;
    viewer = await t.createUser(await t.createOrg('enterprise', 'customer'), 'viewer', 'np-viewer');
    sourceId = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Plaintext check' } })).id;
  });
  afterAll(() => t.close());

  const send = async (as: User, opts: Parameters<TestApp['inject']>[0]) => {
    const res = await t.as(as, opts);
    bodies.push(res.body, JSON.stringify(res.headers));
    return res;
  };
  const records = (id = sourceId) => `/api/v1/leaks/sources/${id}/records/`;

  it('is kept on every ingestion path, accepted or refused', async () => {
    const array = await send(staff, {
      method: 'POST',
      url: records(),
      payload: [
        { email: 'np1@plain.example', password: PASSWORDS.accepted },
        { email: 'not an e-mail', password: PASSWORDS.badEmail },
        { email: 'np2@plain.example', password: PASSWORDS.withNul },
        { email: 'np3@plain.example', password: PASSWORDS.tooLong },
        { email: 'np4@plain.example', password: PASSWORDS.wrongSha1, password_sha1: '0'.repeat(40) },
      ],
    });
    expect(array.statusCode).toBe(200);
    expect(json(array)).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(json(array).rejected.map((r: { index: number }) => r.index)).toEqual([1, 2, 3, 4]);

    const ndjson = [
      JSON.stringify({ email: 'np5@plain.example', password: PASSWORDS.ndjsonAccepted }),
      `{"email": "np6@plain.example", "password": "${PASSWORDS.ndjsonMalformed}",`,
      JSON.stringify({ email: 'np7@plain.example', password: PASSWORDS.ndjsonBadField, leaked_at: 'yesterday' }),
    ].join('\n');
    const streamed = await send(staff, { method: 'POST', url: records(), headers: { 'content-type': 'application/x-ndjson' }, payload: ndjson });
    expect(streamed.statusCode).toBe(200);
    expect(json(streamed)).toMatchObject({ accepted: 1, rejected: [{ index: 1 }, { index: 2 }] });

    const malformed = await send(staff, { method: 'POST', url: records(), headers: { 'content-type': 'application/json' }, payload: `[{"email": "np8@plain.example", "password": "${PASSWORDS.malformedBody}"},]` });
    expect(malformed.statusCode).toBe(400);
    expect((await send(viewer, { method: 'POST', url: records(), payload: [{ email: 'np9@plain.example', password: PASSWORDS.viewer }] })).statusCode).toBe(403);
    expect((await send(staff, { method: 'POST', url: records('0190f2a4-0000-7000-8000-000000000000'), payload: [{ email: 'np10@plain.example', password: PASSWORDS.noSource }] })).statusCode).toBe(404);

    // What reads the stored records back.
    const found = await send(viewer, { method: 'GET', url: '/api/v1/leaks/search/?domain=plain.example' });
    expect(json(found).count).toBe(2);
    expect(json(found).results.map((r: { password_masked: string }) => r.password_masked).sort()).toEqual(['P******************0', 'Q***************1']);
    for (const r of json(found).results) await send(viewer, { method: 'GET', url: `/api/v1/leaks/records/${r.id}/` });
    await send(viewer, { method: 'GET', url: '/api/v1/leaks/search/?q=plain' });
    await send(viewer, { method: 'GET', url: '/api/v1/leaks/stats/' });
    await send(staff, { method: 'GET', url: '/api/v1/audit/' });
  });

  it('holds for every response, every log line and every table', async () => {
    // The logger was on: requests and responses were logged.
    expect(logs.some((l) => l.includes('"url":"/api/v1/leaks/sources/'))).toBe(true);
    expect(leaked(bodies.join('\n'))).toEqual([]);
    expect(leaked(logs.join(''))).toEqual([]);
    const tables = (await t.db.introspection.getTables({ withInternalKyselyTables: false })).map((tb) => tb.name);
    expect(tables).toContain('leak_records');
    let dump = '';
    for (const name of tables) {
      const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(t.db)).rows;
      // Full-text indexes keep their words in binary pages (SQLite FTS5): read as text too.
      dump += JSON.stringify(rows, (_k, v: unknown) => (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('latin1') : v));
    }
    expect(dump).toContain('np1@plain.example');
    expect(leaked(dump)).toEqual([]);
  });
});
