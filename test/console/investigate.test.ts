import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/build-app.js';
import { ConsoleHarness, hasChromium, XSS } from '../helpers/console.js';

// Journeys 4, 5 and 6: leak search, monitors, incidents and their IOCs.
describe.skipIf(!hasChromium)('console: search, monitors, incidents', { timeout: 120_000 }, () => {
  const h = new ConsoleHarness();
  beforeAll(() => h.start(), 120_000);
  afterAll(() => h.stop());
  const domain = () => h.seeded.monitor.name && `${h.seeded.team.org.name}.example`;

  it('searches by domain and severity, shows leak text as text, saves the search, reruns it and exports the page as CSV', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, '/leaks/');
    await page.getByLabel('Domain', { exact: true }).fill(domain());
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('4 records', { exact: true }).waitFor();
    expect(await page.locator('main img').count()).toBe(0);
    await page.getByLabel('Severity').selectOption('high');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('1 records', { exact: true }).waitFor();
    expect(page.url()).toContain('severity=high');
    // The same count through the API, for the same criteria.
    expect(json(await h.api(h.seeded.team.tokens.analyst, 'GET', `/api/v1/leaks/search/?domain=${domain()}&severity=high`)).count).toBe(1);

    await page.getByLabel('Name of the saved search').fill('High on our domain');
    await page.getByRole('button', { name: 'Save this search' }).click();
    await page.getByText('Saved as “High on our domain”.').waitFor();
    await page.goto(`${h.base}/leaks/`);
    await page.getByRole('button', { name: 'Run “High on our domain”' }).click();
    await page.getByText('1 records', { exact: true }).waitFor();
    const saved = json(await h.api(h.seeded.team.tokens.analyst, 'GET', '/api/v1/leaks/saved-searches/')).results[0];
    expect([saved.name, saved.last_result_count]).toEqual(['High on our domain', 1]);

    await page.goto(`${h.base}/leaks/?q=${encodeURIComponent('"dave"')}`);
    await page.getByText('1 records', { exact: true }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export this page as CSV' }).click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    expect(csv.split('\r\n')[0]).toBe('"id","source","email","username","domain","ip","phone","full_name","password_masked","severity","leaked_at"');
    expect(csv).toContain(`"dave@${domain()}"`);
    // The leak's text, quoted as CSV quotes it; a spreadsheet formula would be opened with a quote mark.
    expect(csv).toContain(`"${XSS.replace(/"/g, '""')}"`);
    expect(problems).toEqual([]);
    await context.close();
    await h.survey(h.seeded.team.members.analyst.username, `/leaks/?domain=${domain()}`, 'leak-search', (p) => p.getByText('4 records', { exact: true }).waitFor());
  });

  it('creates a monitor with a backfill whose progress it shows, pauses and resumes it, opens its alerts', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, '/monitors/');
    const form = page.getByRole('form', { name: 'New monitor' });
    await form.getByLabel('Name', { exact: true }).fill('Bob the user');
    await form.getByLabel('Type', { exact: true }).selectOption('username');
    await form.getByLabel('Terms').fill('bob');
    await form.getByRole('button', { name: 'Create monitor' }).click();
    await page.getByRole('heading', { name: 'Monitor: Bob the user' }).waitFor();
    const id = page.url().split('/').at(-2)!;
    // The backfill is queued: run the scans as `serve` would, and the page follows it to its end.
    await page.getByText('Backfill').waitFor();
    await page.getByText('queued').waitFor();
    await h.t.services.monitoring.scans.runPending();
    await page.getByText('completed').waitFor();
    await expect.poll(async () => json(await h.api(h.seeded.team.tokens.analyst, 'GET', `/api/v1/monitoring/${id}/`)).alert_count).toBe(1);
    await page.getByRole('link', { name: /1 in all/ }).waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Paused.').waitFor();
    expect(json(await h.api(h.seeded.team.tokens.analyst, 'GET', `/api/v1/monitoring/${id}/`)).status).toBe('paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByText('Resumed.').waitFor();
    await page.getByRole('link', { name: /1 in all/ }).click();
    await page.waitForURL(`${h.base}/alerts/?monitor=${id}`);
    await expect.poll(() => page.locator('tbody tr[data-row]').count()).toBe(1);
    expect(problems).toEqual([]);
    await context.close();
    await h.survey(h.seeded.team.members.analyst.username, '/monitors/', 'monitors', (p) => p.getByRole('link', { name: 'Bob the user' }).waitFor());
    await h.survey(h.seeded.team.members.analyst.username, `/monitors/${id}/`, 'monitor', (p) => p.getByText('Scans of the corpus').waitFor());
  });

  it('runs an incident: creates it, changes status and severity, adds IOCs one and by a pasted list (errors per line), downloads the STIX bundle', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, '/incidents/');
    const form = page.getByRole('form', { name: 'New incident' });
    await form.getByLabel('Title', { exact: true }).fill('Phishing kit on a look-alike domain');
    await form.getByLabel('Severity').selectOption('high');
    await form.getByRole('button', { name: 'Create incident' }).click();
    await page.getByRole('heading', { name: 'Phishing kit on a look-alike domain' }).waitFor();
    const id = page.url().split('/').at(-2)!;

    await page.getByLabel('Change status').selectOption('investigating');
    await page.getByText('Status: investigating.').waitFor();
    await page.getByLabel('Change severity').selectOption('critical');
    await page.getByText('Severity: critical.').waitFor();

    const one = page.getByRole('form', { name: 'Add an IOC' });
    await one.getByLabel('Type', { exact: true }).selectOption('domain');
    await one.getByLabel('Value').fill('evil-login[.]example');
    await one.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('IOC added.').waitFor();
    await page.getByRole('cell', { name: 'evil-login.example' }).waitFor();

    await page.getByLabel('IOCs, one per line').fill('ipv4,203.0.113.7\nmd5,not-a-hash\nurl,hxxp://evil-login[.]example/kit\nbanana,1');
    await page.getByRole('button', { name: 'Add the list' }).click();
    // An unknown type is caught before sending; the rest go, and the API's refusals come back per line.
    await page.getByText('Line 4: unknown type "banana"').waitFor();
    await page.getByLabel('IOCs, one per line').fill('ipv4,203.0.113.7\nmd5,not-a-hash\nurl,hxxp://evil-login[.]example/kit');
    await page.getByRole('button', { name: 'Add the list' }).click();
    await page.getByText('2 IOCs added, 0 duplicates skipped, 1 line refused.').waitFor();
    await page.getByText(/Line 2: value/).waitFor();
    expect(await page.getByLabel('IOCs, one per line').inputValue()).toBe('md5,not-a-hash');
    const iocs = json(await h.api(h.seeded.team.tokens.analyst, 'GET', `/api/v1/incidents/${id}/iocs/?ordering=created_at`)).results.map((i: { value: string }) => i.value);
    expect(iocs).toEqual(['evil-login.example', '203.0.113.7', 'http://evil-login.example/kit']);
    const incident = json(await h.api(h.seeded.team.tokens.analyst, 'GET', `/api/v1/incidents/${id}/`));
    expect([incident.status, incident.severity, incident.ioc_count]).toEqual(['investigating', 'critical', 3]);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the STIX 2.1 bundle' }).click()]);
    const bundle = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'));
    expect(bundle.type).toBe('bundle');
    expect(bundle.objects.filter((o: { type: string }) => o.type === 'indicator')).toHaveLength(3);
    expect(problems).toEqual([]);
    await context.close();
    await h.survey(h.seeded.team.members.analyst.username, '/incidents/', 'incidents', (p) => p.getByRole('link', { name: 'Phishing kit on a look-alike domain' }).waitFor());
    await h.survey(h.seeded.team.members.analyst.username, `/incidents/${id}/`, 'incident', (p) => p.getByRole('cell', { name: '203.0.113.7' }).waitFor());
  });
});
