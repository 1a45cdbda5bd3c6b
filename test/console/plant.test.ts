import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/build-app.js';
import { ConsoleHarness, hasChromium } from '../helpers/console.js';
import { zipOf } from '../helpers/zip.js';

// Journeys 7 and 8: tracking tokens (plant, copy, timeline); sources and uploads from the browser.
describe.skipIf(!hasChromium)('console: tracking tokens, sources and uploads', { timeout: 120_000 }, () => {
  const h = new ConsoleHarness();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-upload-'));
  beforeAll(() => h.start(), 120_000);
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await h.stop();
  });

  it('creates a token of each kind, shows how to plant it with a copy button, and shows its exposures', async () => {
    const { page, context, problems } = await h.page();
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, '/tokens/');
    const kinds: Array<[string, string]> = [
      ['Web bug', 'Copy URL'],
      ['Redirect', 'Copy link'],
      ['Credential', 'Copy password'],
      ['API key', 'Copy key'],
    ];
    let webBug = '';
    for (const [kind, copy] of kinds) {
      await page.goto(`${h.base}/tokens/`);
      const form = page.getByRole('form', { name: 'New tracking token' });
      await form.getByRole('radio', { name: new RegExp(`^${kind}:`) }).check();
      await form.getByLabel('Name').fill(`${kind} in the finance share`);
      if (kind === 'Redirect') await form.getByLabel('Send visitors to').fill('https://intranet.example/login');
      await form.getByRole('button', { name: 'Create token' }).click();
      await page.getByRole('heading', { name: `Token: ${kind} in the finance share` }).waitFor();
      await page.getByRole('button', { name: copy }).click();
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      const token = json(await h.api(h.seeded.team.tokens.analyst, 'GET', `/api/v1/tracking-tokens/${page.url().split('/').at(-2)}/`));
      // The trigger URL is built from the address the request came to: the browser's is this server's.
      const path = token.trigger_url && new URL(token.trigger_url).pathname;
      expect(copied).toBe({ 'Web bug': `${h.base}${path}`, Redirect: `${h.base}${path}`, Credential: token.password, 'API key': token.api_key }[kind]);
      if (kind === 'Web bug') webBug = page.url();
    }

    // Someone opens the web bug: the timeline shows the exposure, with its address and user agent.
    await page.goto(webBug);
    const token = json(await h.api(h.seeded.team.tokens.analyst, 'GET', `/api/v1/tracking-tokens/${webBug.split('/').at(-2)}/`));
    const hit = await h.t.app.inject({ method: 'GET', url: new URL(token.trigger_url).pathname, headers: { 'user-agent': 'Outlook-Preview/16.0' }, remoteAddress: '198.51.100.23' });
    expect(hit.statusCode).toBe(200);
    await h.t.services.trackingTokens.settled();
    await page.reload();
    await page.getByRole('cell', { name: 'Outlook-Preview/16.0' }).waitFor();
    await page.getByRole('cell', { name: '198.51.100.23' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
    await h.survey(h.seeded.team.members.analyst.username, '/tokens/', 'tokens', (p) => p.getByRole('link', { name: 'Web bug in the finance share' }).waitFor());
    await h.survey(h.seeded.team.members.analyst.username, new URL(webBug).pathname, 'token', (p) => p.getByRole('cell', { name: '198.51.100.23' }).waitFor());
  });

  it('uploads a combolist with a progress bar and a reject report, then the same as .gz, and the members of a .zip', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.owner.username, undefined, '/sources/');
    const form = page.getByRole('form', { name: 'New source' });
    await form.getByLabel('Name').fill('Combolist 2026-11');
    await form.getByLabel('Kind').selectOption('combolist');
    await form.getByRole('button', { name: 'Create source' }).click();
    await page.getByRole('cell', { name: 'Combolist 2026-11' }).waitFor();
    const source = json(await h.api(h.seeded.team.tokens.owner, 'GET', '/api/v1/leaks/sources/?search=Combolist')).results[0];

    const lines = ['erin@upload.example:Winter2026!', 'frank@upload.example:password1', 'no separator on this line', 'grace@upload.example:correct-horse'];
    const txt = path.join(dir, 'combo.txt');
    fs.writeFileSync(txt, `${lines.join('\n')}\n`);
    const upload = page.getByRole('form', { name: 'Upload a dump' });
    await upload.getByLabel('Into the source').selectOption(source.id);
    await upload.getByLabel('File').setInputFiles(txt);
    await upload.getByLabel('Text lines are').selectOption('combo');
    await upload.getByRole('button', { name: 'Upload' }).click();
    await page.getByText('3 records stored, 0 duplicates skipped, 1 line rejected.').waitFor();
    expect(await page.getByRole('progressbar', { name: 'Upload progress' }).getAttribute('value')).toBe(String(fs.statSync(txt).size));
    await page.getByRole('cell', { name: 'combo.txt' }).waitFor();
    expect(json(await h.api(h.seeded.team.tokens.owner, 'GET', `/api/v1/leaks/sources/${source.id}/`)).record_count).toBe(3);

    // The same lines gzipped: opened in the browser, all duplicates now.
    const gz = path.join(dir, 'combo.txt.gz');
    fs.writeFileSync(gz, gzipSync(fs.readFileSync(txt)));
    await upload.getByLabel('File').setInputFiles(gz);
    await upload.getByRole('button', { name: 'Upload' }).click();
    await page.getByText('0 records stored, 3 duplicates skipped, 1 line rejected.').waitFor();

    // A zip of an NDJSON file and a CSV file: each member sent on its own, the report adds them up.
    const zip = path.join(dir, 'dump.zip');
    const ndjson = `${JSON.stringify({ email: 'heidi@upload.example', password: 'x1y2z3w4' })}\n${JSON.stringify({ email: 'not an address' })}\n`;
    const csv = 'email,username\nivan@upload.example,ivan\njudy@upload.example,judy\n';
    fs.writeFileSync(zip, zipOf([['records.ndjson', Buffer.from(ndjson)], ['people.csv', Buffer.from(csv)]], true));
    await upload.getByLabel('File').setInputFiles(zip);
    await upload.getByRole('button', { name: 'Upload' }).click();
    await page.getByText('3 records stored, 0 duplicates skipped, 1 line rejected across 2 files.').waitFor();
    expect(json(await h.api(h.seeded.team.tokens.owner, 'GET', `/api/v1/leaks/sources/${source.id}/`)).record_count).toBe(6);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download every reject (CSV)' }).click()]);
    expect(fs.readFileSync((await download.path())!, 'utf8')).toContain('"records.ndjson","1"');
    await h.shoot(page, 'upload-report');
    expect(problems).toEqual([]);
    await context.close();
    await h.survey(h.seeded.team.members.owner.username, '/sources/', 'sources', (p) => p.getByRole('cell', { name: 'Combolist 2026-11' }).waitFor());
  });

  it('a person who is not staff sees the sources without the upload', async () => {
    const { page, context } = await h.page();
    await h.signIn(page, h.seeded.team.members.admin.username, undefined, '/sources/');
    await page.getByText('Sources are managed and loaded by the platform').waitFor();
    expect(await page.getByRole('form', { name: 'Upload a dump' }).count()).toBe(0);
    await context.close();
  });
});
