import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PULL_LIMITS } from '../../src/modules/feeds/feeds.pull.js';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp, json, JWT_SECRET, TEST_PG_URL, type TestApp, type TestTeam, testDatabaseUrl } from '../helpers/build-app.js';
import { startServer, stopServers } from '../helpers/serve.js';

// A taxii2 feed of threatmon pulling another threatmon's TAXII 2.1 server (its own process and database).
describe('a taxii2 feed, pulling a TAXII 2.1 server', () => {
  let source: TestApp;
  let server: ChildProcess;
  let dir: string;
  let sink: TestApp;
  let publisher: TestTeam;
  let reader: TestTeam;
  let base: string;
  let incident: string;

  const iocs = async () => json(await sink.inject({ method: 'GET', url: '/api/v1/indicators/?ordering=value', headers: { authorization: `Bearer ${reader.tokens.analyst}` } })).results as Array<Record<string, any>>;
  const publish = (method: string, url: string, payload?: unknown) => source.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${publisher.tokens.analyst}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const feed = async (id: string) => json(await sink.inject({ method: 'GET', url: `/api/v1/feeds/${id}/`, headers: { authorization: `Bearer ${reader.tokens.analyst}` } }));
  const sync = (id: string) => sink.inject({ method: 'POST', url: `/api/v1/feeds/${id}/sync/`, headers: { authorization: `Bearer ${reader.tokens.admin}` } });

  beforeAll(async () => {
    // The TAXII server is `threatmon serve` in a process of its own; this test writes its database through an app of its own.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-taxii-feed-'));
    const url = TEST_PG_URL ? await testDatabaseUrl() : `sqlite:${path.join(dir, 'taxii.db')}`;
    source = await buildTestApp({ THREATMON_DATABASE_URL: url });
    ({ base, child: server } = await startServer({ THREATMON_DATABASE_URL: url, THREATMON_JWT_SECRET: JWT_SECRET, THREATMON_WORKERS: '1' }));
    sink = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    publisher = await source.createTeam('enterprise', 'publisher');
    reader = await sink.createTeam('enterprise', 'reader');
    incident = json(
      await publish('POST', '/api/v1/incidents/', {
        title: 'Shared campaign',
        tlp: 'green',
        iocs: [
          { type: 'ipv4', value: '203.0.113.10' },
          { type: 'domain', value: 'phish.example' },
          { type: 'sha256', value: 'a'.repeat(64) },
        ],
      }),
    ).id;
  });
  afterAll(async () => {
    await stopServers([server]);
    await sink.close();
    await source.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads the named collection through discovery with an API key, then only what was added after, a deleted IOC retired', async () => {
    const key = json(await source.inject({ method: 'POST', url: '/api/v1/auth/api-keys/', headers: { authorization: `Bearer ${await source.token(publisher.members.viewer)}` }, payload: { name: 'sink' } })).key;
    const created = await sink.inject({
      method: 'POST',
      url: '/api/v1/feeds/',
      headers: { authorization: `Bearer ${reader.tokens.admin}` },
      payload: { name: 'Partner TAXII', kind: 'taxii2', url: `${base}/taxii2/`, collections: ['Indicators'], auth: { type: 'basic', username: 'sink', password: key } },
    });
    expect(created.statusCode).toBe(201);
    const id = json(created).id;
    expect(await sink.services.feeds.puller.pullDue()).toBe(1);
    expect((await iocs()).map((i) => [i.type, i.value, i.tlp])).toEqual([
      ['ipv4', '203.0.113.10', 'green'],
      ['sha256', 'a'.repeat(64), 'green'],
      ['domain', 'phish.example', 'green'],
    ]);
    expect(await feed(id)).toMatchObject({ status: 'healthy', indicators_added: 3, rejected: 0 });

    // One more IOC, one removed: the next pull reads only the versions added since, from its cursor.
    await publish('POST', `/api/v1/incidents/${incident}/iocs/`, { type: 'url', value: 'https://phish.example/login' });
    const domain = json(await publish('GET', `/api/v1/incidents/${incident}/iocs/?type=domain`)).results[0].id;
    expect((await source.inject({ method: 'DELETE', url: `/api/v1/incidents/${incident}/iocs/${domain}/`, headers: { authorization: `Bearer ${publisher.tokens.admin}` } })).statusCode).toBe(204);
    const read = (await feed(id)).objects_read;
    await sync(id);
    sink.clock.advance(1);
    expect(await sink.services.feeds.puller.pullDue()).toBe(1);
    const after = await feed(id);
    expect(after).toMatchObject({ indicators_added: 4, indicators_retired: 1 });
    expect(after.objects_read - read).toBe(2);
    expect((await iocs()).find((i) => i.value === 'phish.example')).toMatchObject({ revoked: true });
    expect((await iocs()).find((i) => i.value === 'https://phish.example/login')).toMatchObject({ type: 'url', revoked: false });
  });

  it('a pull cut short by its object limit applies what it read with its cursor, and the next goes on from there', async () => {
    const key = json(await source.inject({ method: 'POST', url: '/api/v1/auth/api-keys/', headers: { authorization: `Bearer ${await source.token(publisher.members.viewer)}` }, payload: { name: 'sink 2' } })).key;
    const second = await sink.createTeam('enterprise', 'reader-two');
    const id = json(await sink.inject({ method: 'POST', url: '/api/v1/feeds/', headers: { authorization: `Bearer ${second.tokens.admin}` }, payload: { name: 'Small bites', kind: 'taxii2', url: `${base}/taxii2/${publisher.org.id}/`, auth: { type: 'bearer', token: key } } })).id;
    const limit = PULL_LIMITS.maxObjects;
    PULL_LIMITS.maxObjects = 2;
    try {
      const seen: number[] = [];
      for (let pulls = 0; pulls < 20; pulls++) {
        await sink.services.feeds.puller.pullDue();
        const now = json(await sink.inject({ method: 'GET', url: `/api/v1/feeds/${id}/`, headers: { authorization: `Bearer ${second.tokens.analyst}` } }));
        seen.push(now.objects_read);
        if (now.last_error === null) break;
        expect(now.last_error).toMatch(/^stopped after 2 objects/);
        sink.clock.advance(61);
      }
      // Every pull cut short moved on (never the same objects twice); the last may find nothing left.
      expect(seen.length).toBeGreaterThan(2);
      for (let i = 1; i < seen.length - 1; i++) expect(seen[i]).toBe(seen[i - 1]! + 2);
    } finally {
      PULL_LIMITS.maxObjects = limit;
    }
    const got = json(await sink.inject({ method: 'GET', url: `/api/v1/indicators/?feed=${id}&ordering=value`, headers: { authorization: `Bearer ${second.tokens.analyst}` } })).results.map((i: { value: string; revoked: boolean }) => [i.value, i.revoked]);
    expect(got).toEqual([
      ['203.0.113.10', false],
      ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', false],
      ['https://phish.example/login', false],
      ['phish.example', true],
    ]);
  });
});
