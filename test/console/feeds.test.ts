import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/build-app.js';
import { ConsoleHarness, hasChromium } from '../helpers/console.js';

const bundle = JSON.stringify({
  type: 'bundle',
  id: 'bundle--00000000-0000-4000-8000-0000000000c0',
  objects: ["[ipv4-addr:value = '203.0.113.77']", "[domain-name:value = 'c2.bad.example']", "[url:value = 'http://drop.bad.example/x.exe']"].map((pattern, i) => ({
    type: 'indicator',
    spec_version: '2.1',
    id: `indicator--00000000-0000-4000-8000-00000000000${i}`,
    created: '2026-11-01T00:00:00.000Z',
    modified: '2026-11-01T00:00:00.000Z',
    pattern,
    pattern_type: 'stix',
    valid_from: '2026-11-01T00:00:00Z',
    confidence: 85,
  })),
});

// Feeds: an admin adds one and pulls it; analysts flag what is wrong; a token hit shows the indicator that named it.
describe.skipIf(!hasChromium)('console: feeds and indicators', { timeout: 120_000 }, () => {
  const h = new ConsoleHarness();
  const asked: Array<string | undefined> = [];
  const server = http.createServer((req, res) => {
    asked.push(req.headers['x-api-key'] as string | undefined);
    res.writeHead(200, { 'content-type': 'application/json' }).end(bundle);
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bundle.json`;
    await h.start({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
  }, 120_000);
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await h.stop();
  });

  it('adds a feed with its key (never kept in the page\'s storage), pulls it, lists its indicators; an analyst flags one', async () => {
    const { page, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.admin.username, undefined, '/feeds/');
    const form = page.getByRole('form', { name: 'New feed' });
    await form.getByRole('radio', { name: /STIX 2.1 bundle/ }).check();
    await form.getByLabel('Name', { exact: true }).fill('Partner STIX');
    await form.getByLabel('URL', { exact: true }).fill(url);
    await form.getByLabel('Key header', { exact: true }).fill('X-API-Key');
    await form.getByLabel('Key', { exact: true }).fill('partner-secret-key');
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).not.toContain('partner-secret-key');
    await form.getByRole('button', { name: 'Add feed' }).click();
    await page.getByRole('button', { name: 'Partner STIX', exact: true }).waitFor();
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).not.toContain('partner-secret-key');
    // The background pull, as `threatmon serve` runs it.
    expect(await h.t.services.feeds.puller.pullDue()).toBe(1);
    expect(asked).toEqual(['partner-secret-key']);
    // The click's request answered (202: due now) before the pull is run.
    await Promise.all([page.waitForResponse((r) => r.url().includes('/sync/') && r.status() === 202), page.getByRole('button', { name: 'Pull now Partner STIX' }).click()]);
    expect(await h.t.services.feeds.puller.pullDue()).toBe(1);
    await page.reload();
    const row = page.getByRole('row', { name: /Partner STIX/ });
    await row.getByText('healthy').waitFor();
    await row.getByText('3 / 0 / 0').waitFor();
    await page.getByRole('cell', { name: '203.0.113.77', exact: true }).first().waitFor();
    expect(problems).toEqual([]);

    const analyst = await h.page();
    await h.signIn(analyst.page, h.seeded.team.members.analyst.username, undefined, '/feeds/?type=domain');
    await analyst.page.getByRole('cell', { name: 'c2.bad.example', exact: true }).first().waitFor();
    expect(await analyst.page.getByRole('form', { name: 'New feed' }).count()).toBe(0);
    expect(await analyst.page.getByRole('button', { name: /Pull now/ }).count()).toBe(0);
    await analyst.page.getByRole('button', { name: 'Flag c2.bad.example' }).click();
    await analyst.page.getByRole('button', { name: 'Unflag c2.bad.example' }).waitFor();
    const flagged = json(await h.api(h.seeded.team.tokens.analyst, 'GET', '/api/v1/indicators/?type=domain')).results[0];
    expect(flagged).toMatchObject({ value: 'c2.bad.example', false_positive: true });
    expect(analyst.problems).toEqual([]);

    // A viewer is not offered the page.
    const viewer = await h.page();
    await h.signIn(viewer.page, h.seeded.team.members.viewer.username);
    expect(await viewer.page.getByRole('link', { name: 'Feeds' }).count()).toBe(0);
  });

  it('shows on a token\'s timeline the indicator that named a hit, and its severity raised', async () => {
    const token = json(await h.api(h.seeded.team.tokens.analyst, 'POST', '/api/v1/tracking-tokens/', { name: 'Board pack', kind: 'web_bug' }));
    await h.t.app.inject({ method: 'GET', url: new URL(token.trigger_url).pathname, remoteAddress: '203.0.113.77' });
    await h.t.app.inject({ method: 'GET', url: new URL(token.trigger_url).pathname, remoteAddress: '192.0.2.14' });
    await h.t.services.trackingTokens.settled();
    await h.survey(h.seeded.team.members.analyst.username, `/tokens/${token.id}/`, 'token-indicators', (p) => p.getByText(/ip: ipv4 203\.0\.113\.77 \(Partner STIX, confidence 85\)/).waitFor());
    await h.survey(h.seeded.team.members.admin.username, '/feeds/', 'feeds', (p) => p.getByRole('cell', { name: '203.0.113.77', exact: true }).first().waitFor());
  });
});
