import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { importLeaks } from '../../src/cli/import-leaks.js';
import { normaliseRecord, parseFullText } from '../../src/domain/leak-record.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';
import type { LeakSearches } from '../../src/modules/leaks/leaks.search.repository.js';

/** Prefix searches (`jam*`), on PostgreSQL spelled out as the words that start with the prefix (LeaksService.expandPrefixes). */
describe('full-text prefixes', () => {
  let t: TestApp;
  let staff: User;
  let viewer: User;
  let sourceId: string;

  const ingest = (records: unknown) => t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${sourceId}/records/`, payload: records as object });
  const search = (qs: string) => t.as(viewer, { method: 'GET', url: `/api/v1/leaks/search/${qs}` });

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'platform', true)).owner;
    const org = await t.createOrg('enterprise', 'customer');
    viewer = await t.createUser(org, 'viewer', 'cust-viewer');
    const res = await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Prefix words' } });
    expect(res.statusCode).toBe(201);
    sourceId = json(res).id;
  });
  afterAll(() => t.close());
  const emailsOf = async (qs: string) => json(await search(qs)).results.map((r: { email: string }) => r.email);

  it('matches a phrase only where its words follow one another whole: not inside a longer word, not apart', async () => {
    expect(json(await ingest([{ email: 'zq@phrase.example', full_name: 'Bmirto Velkan Mirto' }])).accepted).toBe(1);
    expect(await emailsOf('?q="bmirto velkan"')).toEqual(['zq@phrase.example']);
    expect(await emailsOf('?q="velkan mirto" zq')).toEqual(['zq@phrase.example']);
    // Both words are in the record: the index finds it, the phrase rules it out.
    expect(await emailsOf('?q="mirto velkan"')).toEqual([]);
    expect(await emailsOf('?q="bmirto mirto"')).toEqual([]);
    expect(await emailsOf('?q="example bmirto velkan mirto"')).toEqual(['zq@phrase.example']);
  });

  it('spells a prefix out as the words of the index that start with it, and finds what the prefix finds', async () => {
    // 70 words starting with qx (letters only: a word is a run of letters or of digits).
    const letters = 'abcdefghij';
    const many = Array.from({ length: 70 }, (_, i) => ({ username: `qx${letters[Math.floor(i / 10)]}${letters[i % 10]}zz` }));
    const few = [{ username: 'zorblax' }, { username: 'zorbit7' }, { email: 'zorba@prefix.example', full_name: 'Zorba Greek' }, { username: 'zoe', full_name: 'Zoë Ångström' }];
    expect(json(await ingest([...many, ...few])).accepted).toBe(74);
    const expand = (q: string) => t.services.leaks.expandPrefixes(parseFullText(q));
    if (t.app.deps.database.dialect === 'postgres') {
      // From leak_words, which ingest keeps.
      expect(await expand('zorb* greek')).toEqual([
        { kind: 'prefix', words: ['zorb'], completions: ['zorba', 'zorbit', 'zorblax'] },
        { kind: 'word', words: ['greek'] },
      ]);
      expect(await expand('zorba gre*')).toEqual([
        { kind: 'word', words: ['zorba'] },
        { kind: 'prefix', words: ['gre'], completions: ['greek'] },
      ]);
      expect(await expand('zorbz*')).toEqual([{ kind: 'prefix', words: ['zorbz'], completions: [] }]);
      // More words than are worth spelling out, or letters each engine folds its own way: left a prefix.
      expect(await expand('qx*')).toEqual([{ kind: 'prefix', words: ['qx'] }]);
      expect(await expand('ångs*')).toEqual([{ kind: 'prefix', words: ['ångs'] }]);
    } else {
      // SQLite runs prefixes as they are.
      expect(await expand('zorb* greek')).toEqual(parseFullText('zorb* greek'));
    }

    const count = async (q: string) => {
      const res = await search(`?q=${encodeURIComponent(q)}&page_size=100`);
      expect(res.statusCode, res.body).toBe(200);
      return json(res).count;
    };
    expect(await count('zorb*')).toBe(3);
    expect(await count('zorbi*')).toBe(1);
    expect(await count('zorb* greek')).toBe(1);
    expect(await count('zorbit7*')).toBe(1);
    expect(await count('zorba gre*')).toBe(1);
    expect(await count('zorbz*')).toBe(0);
    expect(await count('zorbz* greek')).toBe(0);
    expect(await count('qx*')).toBe(70);
    expect(await count('qxa*')).toBe(10);
    expect(await count('ångs*')).toBe(1);
    // A prefix that matches nothing still validates the rest of the query, and pages past the end are 404.
    expect((await search('?q=zorbz*&email=not-an-email')).statusCode).toBe(400);
    expect((await search('?q=zorbz*&page=2')).statusCode).toBe(404);
  });

  it('keeps in the vocabulary a word whose first ingest was rolled back, when it comes again', async () => {
    // The words of an ingest are remembered as written only once it commits: a failed batch's
    // words are written again by the next ingest that holds them.
    const expand = (q: string) => t.services.leaks.expandPrefixes(parseFullText(q));
    expect(json(await ingest([{ username: 'vocabalpha' }])).accepted).toBe(1);
    const failing = vi.spyOn(t.services.monitoring, 'raiseAlerts').mockRejectedValueOnce(new Error('a batch that fails'));
    try {
      // vocabalpha again, now known to this process, beside a new word, in a transaction rolled back.
      expect((await ingest([{ username: 'vocabalpha', full_name: 'Vocabbeta Once' }])).statusCode).toBe(503);
    } finally {
      failing.mockRestore();
    }
    expect(json(await ingest([{ username: 'vocabalpha', full_name: 'Vocabbeta Once' }])).accepted).toBe(1);
    if (t.app.deps.database.dialect === 'postgres') {
      expect(await expand('vocaba*')).toEqual([{ kind: 'prefix', words: ['vocaba'], completions: ['vocabalpha'] }]);
      expect(await expand('vocabb*')).toEqual([{ kind: 'prefix', words: ['vocabb'], completions: ['vocabbeta'] }]);
    }
    const res = await search('?q=vocabb*');
    expect(res.statusCode).toBe(200);
    expect(json(res).count).toBe(1);
  });

  it('takes the words an import gives with its items (the CLI reader thread\'s) as the vocabulary, those of a later batch too', async () => {
    const expand = (q: string) => t.services.leaks.expandPrefixes(parseFullText(q));
    // A file through the CLI: its reader thread sends each batch's new words on its first item.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-words-'));
    try {
      const file = path.join(dir, 'words.ndjson');
      fs.writeFileSync(file, ['Wordfile Alpha', 'Wordfile Beta'].map((full_name, i) => JSON.stringify({ email: `w${i}@words.example`, full_name })).join('\n'));
      const out = fs.createWriteStream('/dev/null') as unknown as NodeJS.WriteStream;
      expect(await importLeaks(t.services.leaks, { file, source: 'Prefix words', progress: false, out })).toMatchObject({ accepted: 2 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // Words given on a first item that is a duplicate, in a batch of its own: the next batch's record still has them.
    const given = [{ email: 'w0@words.example', full_name: 'Wordfile Alpha' }, { email: 'w9@words.example', full_name: 'Wordgiven Gamma' }].map((value, index) => {
      const result = normaliseRecord(value);
      return { index, result, ...(index === 0 ? { words: ['w9', 'wordgiven', 'gamma', 'words', 'example'] } : {}) };
    });
    const report = await t.services.leaks.ingest(sourceId, given, { p: null, ip: null }, { batchSize: 1, wordsGiven: true });
    expect(report).toMatchObject({ accepted: 1, duplicates: 1 });
    if (t.app.deps.database.dialect === 'postgres') {
      expect(await expand('wordf*')).toEqual([{ kind: 'prefix', words: ['wordf'], completions: ['wordfile'] }]);
      expect(await expand('wordg*')).toEqual([{ kind: 'prefix', words: ['wordg'], completions: ['wordgiven'] }]);
    }
    expect(json(await search('?q=wordg*')).count).toBe(1);
    expect(json(await search('?q=wordf*')).count).toBe(2);
  });

  it('checks every parameter before it looks a prefix up', async () => {
    // The search's own part looks prefixes up (LeakSearches, inside the leaks service).
    const spy = vi.spyOn((t.services.leaks as unknown as { searches: LeakSearches }).searches, 'expandPrefixes');
    try {
      for (const qs of ['?q=zorb*&email=not-an-email', '?q=zorb*&ip=300.1.1.1', '?q=zorb*&domain=-bad-', '?q=zorb*&phone=12']) {
        const res = await search(qs);
        expect(res.statusCode, qs).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
      expect(spy).not.toHaveBeenCalled();
      expect((await search('?q=zorb*')).statusCode).toBe(200);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });
});
