import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, PASSWORD } from '../helpers/build-app.js';
import { ConsoleHarness, hasChromium } from '../helpers/console.js';
import { Receiver } from '../helpers/receiver.js';

// Journeys 9 and 10: integrations (keys, webhooks, channels, TAXII, HIBP) and administration; roles.
describe.skipIf(!hasChromium)('console: integrations and administration', { timeout: 120_000 }, () => {
  const h = new ConsoleHarness();
  const receiver = new Receiver();
  let receiverUrl: string;
  beforeAll(async () => {
    receiverUrl = await receiver.start();
    await h.start({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
  }, 120_000);
  afterAll(async () => {
    await receiver.close();
    await h.stop();
  });

  it('creates an API key shown once (copy, then revoke), a webhook it tests and whose deliveries it lists, a channel; shows the TAXII and HIBP addresses', async () => {
    const { page, context, problems } = await h.page();
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await h.signIn(page, h.seeded.team.members.admin.username, undefined, '/integrations/');
    const keys = page.getByRole('form', { name: 'New API key' });
    await keys.getByLabel('Name').fill('SOAR playbooks');
    await keys.getByLabel('Role').selectOption('analyst');
    await keys.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('shown this once').waitFor();
    await page.getByRole('button', { name: 'Copy key' }).click();
    const key = await page.evaluate(() => navigator.clipboard.readText());
    expect(key).toMatch(/^tm_[A-Za-z0-9_-]{43}$/);
    // The key works as the API says, with the analyst role it was given.
    expect(json(await h.t.app.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { 'x-api-key': key } })).username).toBe(h.seeded.team.members.admin.username);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByText(key).count()).toBe(0);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Revoke SOAR playbooks' }).click();
    await expect.poll(async () => (await h.t.app.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { 'x-api-key': key } })).statusCode).toBe(401);

    const hooks = page.getByRole('form', { name: 'New webhook' });
    await hooks.getByLabel('URL').fill(`${receiverUrl}/threatmon`);
    await hooks.getByRole('checkbox', { name: 'incident.created' }).check();
    await hooks.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByText('The signing secret, shown this once').waitFor();
    expect(await page.locator('.notice code').textContent()).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByText(`Ping delivered to ${receiverUrl}/threatmon: 200`).waitFor();
    await page.getByText(/ping \(attempt 1\): 200/).waitFor();
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(['ping']);

    const channels = page.getByRole('form', { name: 'New channel' });
    await channels.getByLabel('Kind').selectOption('mattermost');
    await channels.getByLabel('Name').fill('SOC room');
    await channels.getByLabel('Incoming-webhook URL').fill(`${receiverUrl}/mattermost`);
    await channels.getByRole('button', { name: 'Create channel' }).click();
    await page.getByText('Channel “SOC room” created.').waitFor();
    await page.getByRole('button', { name: 'Test SOC room' }).click();
    await page.getByText('Sample sent to “SOC room” (200).').waitFor();
    expect(receiver.received.at(-1)!.path).toBe('/mattermost');

    // TAXII: the organization's API root and its two collections, read through the same session.
    await page.getByText(`${h.base}/taxii2/${h.seeded.team.org.id}/`).waitFor();
    await page.getByText('Indicators', { exact: true }).waitFor();
    await page.getByText('Exposures', { exact: true }).waitFor();
    await page.getByText(`${h.base}/hibp/api/v3`).waitFor();
    expect(problems).toEqual([]);
    await context.close();
    await h.survey(h.seeded.team.members.admin.username, '/integrations/', 'integrations', (p) => p.getByRole('cell', { name: 'SOC room', exact: true }).waitFor());
  });

  it('administers users, roles, the organization and its plan, and reads the audit log with filters', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.owner.username, undefined, '/admin/');
    const add = page.getByRole('form', { name: 'Add a user' });
    await add.getByLabel('Username').fill('new-analyst');
    await add.getByLabel('E-mail').fill('new-analyst@example.com');
    await add.getByLabel('First password').fill('a long enough first password');
    await add.getByLabel('Role').selectOption('viewer');
    await add.getByRole('button', { name: 'Add user' }).click();
    await page.getByText('new-analyst added.').waitFor();
    await page.getByLabel('Role of new-analyst').selectOption('analyst');
    await page.getByText('new-analyst is now analyst.').waitFor();
    await page.getByRole('button', { name: 'Deactivate new-analyst' }).click();
    await page.getByText('new-analyst is deactivated').waitFor();
    const users = json(await h.api(h.seeded.team.tokens.owner, 'GET', '/api/v1/users/?search=new-analyst')).results;
    expect(users.map((u: { role: string; is_active: boolean }) => [u.role, u.is_active])).toEqual([['analyst', false]]);

    await page.getByLabel('Plan', { exact: true }).selectOption('professional');
    await page.getByText('Saved.').waitFor();
    expect(json(await h.api(h.seeded.team.tokens.owner, 'GET', '/api/v1/organization/')).plan).toBe('professional');

    // Every entry before the filter; only the role change after it (the address is in the page's address too).
    const entries = page.getByRole('table', { name: 'Audit log' }).locator('tbody tr[data-row]');
    await expect.poll(() => entries.filter({ hasNotText: 'user.updated' }).count()).toBeGreaterThan(0);
    await page.getByLabel('Action').fill('user.updated');
    await expect.poll(() => entries.filter({ hasNotText: 'user.updated' }).count()).toBe(0);
    expect(await entries.count()).toBeGreaterThan(0);
    expect(page.url()).toContain('action=user.updated');
    expect(problems).toEqual([]);
    await context.close();
    await h.survey(h.seeded.team.members.owner.username, '/admin/', 'admin', (p) => p.getByRole('cell', { name: 'new-analyst', exact: true }).waitFor());
  });

  it('shows each role only what it may do, and explains a refusal instead of failing silently', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.viewer.username, undefined, '/incidents/');
    await page.locator('h1', { hasText: 'Incidents' }).waitFor();
    expect(await page.getByRole('form', { name: 'New incident' }).count()).toBe(0);
    await page.goto(`${h.base}/monitors/`);
    await page.locator('h1', { hasText: 'Monitors' }).waitFor();
    expect(await page.getByRole('button', { name: /Pause|Create monitor/ }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Administration' }).count()).toBe(0);
    await page.goto(`${h.base}/admin/`);
    await page.getByText('Administration is for administrators and owners: your role is viewer.').waitFor();
    await context.close();

    // An analyst demoted to viewer while the page is open: the next change is refused, and said so.
    const analyst = await h.t.createUser(h.seeded.team.org, 'analyst');
    const second = await h.page();
    await h.signIn(second.page, analyst.username, PASSWORD, `/monitors/${h.seeded.monitor.id}/`);
    await second.page.getByRole('button', { name: 'Pause' }).waitFor();
    await h.api(h.seeded.team.tokens.owner, 'PATCH', `/api/v1/users/${analyst.id}/`, { role: 'viewer' });
    await second.page.getByRole('button', { name: 'Pause' }).click();
    await second.page.getByText('Not allowed. Your role (analyst) cannot change this monitor').waitFor();
    expect(json(await h.api(h.seeded.team.tokens.owner, 'GET', `/api/v1/monitoring/${h.seeded.monitor.id}/`)).status).toBe('active');
    expect(second.problems).toEqual([]);
    expect(problems).toEqual([]);
    await second.context.close();
  });
});
