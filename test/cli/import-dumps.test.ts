import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLeaks } from '../../src/cli/import-leaks.js';
import { capture } from '../helpers/capture.js';
import { buildTestApp, type TestApp } from '../helpers/build-app.js';
import { zipOf } from '../helpers/zip.js';

/** Real dumps as they come, through import-leaks: each format, compressed, in other encodings, with junk. */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-dumps-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));


describe('import-leaks on real dumps', () => {
  let t: TestApp;
  const file = (name: string, content: string | Buffer) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, content);
    return f;
  };
  const run = async (f: string, source: string, extra: Partial<Parameters<typeof importLeaks>[1]> = {}) => {
    const { out, said } = capture();
    const report = await importLeaks(t.services.leaks, { file: f, source, createSource: true, progress: false, out, ...extra });
    return { report, said: said() };
  };
  /** The records of a source, by e-mail or else username (the same order on both databases). */
  const records = async (source: string) =>
    (
      await t.db
        .selectFrom('leak_records')
        .innerJoin('leak_sources', 'leak_sources.id', 'leak_records.source_id')
        .select(['email', 'username', 'leak_records.domain', 'password_sha1', 'password_masked', 'extra', 'severity'])
        .where('leak_sources.name', '=', source)
        .execute()
    ).sort((a, b) => ((a.email ?? a.username ?? '') < (b.email ?? b.username ?? '') ? -1 : 1));

  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it.each([
    [':', 'colon'],
    [';', 'semicolon'],
    ['|', 'pipe'],
    ['\t', 'tab'],
  ])('detects a combolist separated by %j and imports it: e-mails, usernames, hashes kept as hashes', async (sep, name) => {
    const lines = [`alice@${name}.example${sep}Summer2024!`, `bob_${name}${sep}hunter2${sep}x`, `carol@${name}.example${sep}5f4dcc3b5aa765d61d8327deb882cf99`, `dave@${name}.example${sep}5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8`];
    const { report, said } = await run(file(`combo-${name}.txt`, `${lines.join('\n')}\n`), `Combo ${name}`);
    expect(said).toContain(`as a combolist (separator "${sep === '\t' ? '\\t' : sep}")`);
    expect(report).toMatchObject({ accepted: 4, duplicates: 0, rejected: [] });
    const stored = await records(`Combo ${name}`);
    // Plaintext passwords are high, hashes medium.
    expect(stored.map((r) => [r.email ?? r.username, r.password_masked, r.password_sha1 ? 'sha1' : null, JSON.parse(r.extra), r.severity])).toEqual([
      [`alice@${name}.example`, 'S*********!', 'sha1', {}, 'high'],
      [`bob_${name}`, `h${'*'.repeat(`hunter2${sep}x`.length - 2)}x`, 'sha1', {}, 'high'],
      [`carol@${name}.example`, null, null, { password_hash: '5f4dcc3b5aa765d61d8327deb882cf99', hash_type: 'md5' }, 'medium'],
      [`dave@${name}.example`, null, 'sha1', {}, 'medium'],
    ]);
    expect(stored.find((r) => r.email?.startsWith('dave'))?.password_sha1).toBe('5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8');
  });

  it('imports stealer-log lines: the URL host as the domain (beside an e-mail login too), an Android app', async () => {
    const lines = [
      'https://login.bank.example:8443/auth:jdoe:s3cret',
      'https://portal.example/login:jane@corp.example:pw:with:colons',
      'android://abcDEF==@com.whatsapp/:+15550100:pw',
      'URL: not a credential line',
    ];
    const { report, said } = await run(file('stealer.txt', `${lines.join('\r\n')}\r\n`), 'Stealer');
    expect(said).toContain('as stealer-log lines (separator ":")');
    expect(report).toMatchObject({ accepted: 3, rejected: [{ index: 4, errors: [{ field: 'line', message: 'not a stealer-log line (url, login, password)' }] }] });
    // Each a stealer-log credential: critical.
    expect((await records('Stealer')).map((r) => [r.email ?? r.username, r.domain, JSON.parse(r.extra), r.severity])).toEqual([
      ['+15550100', null, { app: 'com.whatsapp' }, 'critical'],
      ['jane@corp.example', 'portal.example', { url: 'https://portal.example/login' }, 'critical'],
      ['jdoe', 'login.bank.example', { url: 'https://login.bank.example:8443/auth' }, 'critical'],
    ]);
  });

  it('reads gzip and every member of a zip (each detected on its own), streamed', async () => {
    const combo = Buffer.from('gz1@zip.example:pw1\ngz2@zip.example:pw2\n');
    const gz = await run(file('dump.txt.gz', zlib.gzipSync(combo)), 'Gzipped');
    expect(gz.report).toMatchObject({ accepted: 2 });
    const zip = file('dump.zip', zipOf([
      ['a/combo.txt', Buffer.from('z1@zip.example;pw\nz2@zip.example;pw\n')],
      ['a/', Buffer.alloc(0)],
      ['b/records.ndjson.gz', zlib.gzipSync(Buffer.from('{"email":"z3@zip.example"}\n'))],
      ['c.csv', Buffer.from('email,password,city\nz4@zip.example,pw,Paris\n')],
    ]));
    const zipped = await run(zip, 'Zipped');
    expect(zipped.said).toContain(`Detected ${zip}:a/combo.txt as a combolist (separator ";")`);
    expect(zipped.said).toContain(`Detected ${zip}:b/records.ndjson.gz as NDJSON`);
    expect(zipped.said).toContain(`Detected ${zip}:c.csv as CSV`);
    expect(zipped.report).toMatchObject({ accepted: 4, rejected: [] });
    expect(zipped.report.members.map((m) => m.format)).toEqual(['combo', 'ndjson', 'csv']);
  });

  it('reads UTF-16 with a BOM, and Windows-1252 lines among UTF-8 ones, counted', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('zoë@enc.example:€uro1\nmaël@enc.example:pw\n', 'utf16le')]);
    expect((await run(file('utf16.txt', utf16), 'UTF-16')).report).toMatchObject({ accepted: 2 });
    expect((await records('UTF-16')).map((r) => r.email)).toEqual(['maël@enc.example', 'zoë@enc.example']);
    const mixed = Buffer.concat([Buffer.from('\ufeffplain@enc.example:ok\n'), iconv.encode('renée@enc.example:café\n', 'win1252'), Buffer.from('josé@enc.example:mañana\n')]);
    const { report, said } = await run(file('mixed.txt', mixed), 'Mixed');
    expect(report).toMatchObject({ accepted: 3, windows1252Lines: 1 });
    expect(said).toContain('1 lines were not UTF-8 and were read as Windows-1252.');
    expect((await records('Mixed')).map((r) => r.email)).toEqual(['josé@enc.example', 'plain@enc.example', 'renée@enc.example']);
  });

  it('never stops for junk: each unreadable line is rejected with its number and reason, listed in --rejects, counted by reason', async () => {
    const lines = ['# a comment', '', 'ok1@junk.example:pw', 'no separator at all', 'ok2@junk.example:pw', 'two words:pw', 'ok3@junk.example:pw', ':nologin', 'x'.repeat(5000), 'bad@:pw'];
    const rejects = path.join(dir, 'rejects.ndjson');
    const f = file('junk.txt', `${lines.join('\n')}\n`);
    const { report, said } = await run(f, 'Junk', { format: 'combo', separator: ':', rejects });
    expect(report.accepted).toBe(4);
    expect(report.rejected.map((r) => [r.index, r.errors[0]?.message])).toEqual([
      [4, 'no separator ":"'],
      [6, 'login holds white space'],
      [8, 'empty login'],
      [9, 'line longer than 4096 characters'],
    ]);
    expect(said).toMatch(/Rejected, by reason: 1 line: no separator ":"; 1 line: login holds white space; 1 line: empty login; 1 line: line longer than 4096 characters\./);
    const written = fs.readFileSync(rejects, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(written.map((w) => [w.line, w.reason])).toEqual([
      [4, 'line: no separator ":"'],
      [6, 'line: login holds white space'],
      [8, 'line: empty login'],
      [9, 'line: line longer than 4096 characters'],
    ]);
    expect(written[0]).toMatchObject({ file: f, text: 'no separator at all' });
    // `bad@` reads as a username: a login need not be an e-mail.
    // Imported again: everything a duplicate, the same lines rejected.
    const again = await run(f, 'Junk', { format: 'combo', separator: ':' });
    expect(again.report).toMatchObject({ accepted: 0, duplicates: 4 });
    expect(again.report.rejected).toHaveLength(4);
  });

  it('reads a headerless CSV or TSV with --columns, and refuses --columns without one of them', async () => {
    const { report } = await run(file('headerless.tsv', 'hl1@cols.example\tpw1\tParis\nhl2@cols.example\tpw2\tOslo\n'), 'Headerless', { format: 'tsv', columns: ['email', 'password', 'city'] });
    expect(report).toMatchObject({ accepted: 2, rejected: [] });
    expect((await records('Headerless')).map((r) => [r.email, JSON.parse(r.extra)])).toEqual([
      ['hl1@cols.example', { city: 'Paris' }],
      ['hl2@cols.example', { city: 'Oslo' }],
    ]);
    await expect(run(file('cols.txt', 'a:b\n'), 'Cols', { columns: ['email'] })).rejects.toThrow(/--columns/);
  });

  it('takes the separator its lines read with when --format comes alone', async () => {
    const { report, said } = await run(file('stealer-pipes.txt', 'https://a.sep.example|u1|p1\nhttps://b.sep.example/x|u2|p:2\n'), 'Pipes', { format: 'stealer' });
    expect(said).toContain('as stealer-log lines (separator "|")');
    expect(report).toMatchObject({ accepted: 2, rejected: [] });
  });

  it('sets the kind of the source it creates with --kind, and of one that exists', async () => {
    const f = file('kind.txt', 'k1@kind.example:pw\n');
    await run(f, 'Kinded', { kind: 'combolist' });
    expect((await t.services.leaks.findSourceByName('Kinded'))?.kind).toBe('combolist');
    const { said } = await run(f, 'Kinded', { kind: 'stealer_log' });
    expect(said).toContain('Leak source "Kinded" is now of kind stealer_log.');
    expect((await t.services.leaks.findSourceByName('Kinded'))?.kind).toBe('stealer_log');
  });

  it('says it cannot tell a format from content that is none, and --format reads it as asked', async () => {
    const f = file('prose.txt', 'Dear reader,\nthis is not a dump.\n');
    await expect(run(f, 'Prose')).rejects.toThrow(/cannot tell the format of .*prose\.txt from its content: pass --format/);
  });
});

describe('POST /leaks/sources/<id>/records/ with text/plain', () => {
  let t: TestApp;
  let staff: import('../../src/modules/identity/index.js').User;
  let source: string;
  const post = (body: string | Buffer, qs = '') =>
    t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/${qs}`, headers: { 'content-type': 'text/plain; charset=utf-8' }, payload: body });

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'text-platform', true)).owner;
    source = JSON.parse((await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Pasted' } })).body).id;
  });
  afterAll(() => t.close());

  it('takes a combolist, detected, with the answer of any ingest and line numbers for rejections', async () => {
    const res = await post('# pasted\nann@text.example|Winter22\nno separator\nben@text.example|5f4dcc3b5aa765d61d8327deb882cf99\n');
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ accepted: 2, duplicates: 0, rejected: [{ index: 3, errors: [{ field: 'line', message: 'no separator "|"' }] }], alerts_raised: 0, exposures_found: 0 });
    // The same lines again: duplicates.
    expect(JSON.parse((await post('ann@text.example|Winter22\n')).body)).toMatchObject({ accepted: 0, duplicates: 1 });
  });

  it('takes stealer-log lines as ?format= says, and refuses a format it does not know', async () => {
    const res = await post('https://mail.text.example/login;carl;pw1\nhttps://crm.text.example;dora@text.example;pw2\n', '?format=stealer&separator=;');
    expect(JSON.parse(res.body)).toMatchObject({ accepted: 2, rejected: [] });
    const bad = await post('a:b\n', '?format=yaml');
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ code: 'invalid_query', errors: [{ field: 'format', message: 'must be combo or stealer' }] });
    const prose = await post('Dear reader,\nthis is no dump\n');
    expect(prose.statusCode).toBe(400);
  });
});
