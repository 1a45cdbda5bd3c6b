import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/build-app.js';
import { ConsoleHarness, hasChromium, XSS } from '../helpers/console.js';

/** Presses Tab until a row of the table has the focus, as a keyboard user does. */
async function tabToRow(page: Page) {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement?.matches('tr[data-row]'))) return;
  }
  throw new Error('Tab never reached a row of the table');
}

interface Alert {
  id: string;
  status: string;
  incident: string | null;
  leak_record: { email: string };
}

// Journey 3: the alerts inbox, triage by keyboard alone and by mouse, an alert's detail, escalation.
describe.skipIf(!hasChromium)('console: the alerts inbox', () => {
  const h = new ConsoleHarness();
  beforeAll(() => h.start(), 120_000);
  afterAll(() => h.stop());

  async function alerts(): Promise<Alert[]> {
    return json(await h.api(h.seeded.team.tokens.analyst, 'GET', '/api/v1/monitoring/alerts/?ordering=created_at')).results;
  }

  it('triages with the keyboard alone: move, select, acknowledge; the list and the API agree', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, '/alerts/?status=new');
    const rows = page.locator('tbody tr[data-row]');
    await expect.poll(() => rows.count()).toBe(4);
    const [first, second] = (await rows.allTextContents()).slice(0, 2);
    // Tab reaches the table's rows; j moves down, x selects, a acknowledges what is selected.
    await tabToRow(page);
    await page.keyboard.press('x');
    await page.keyboard.press('j');
    await page.keyboard.press('x');
    await page.getByText('2 alerts selected').waitFor();
    await page.keyboard.press('a');
    await page.getByText('2 alerts acknowledged.').waitFor();
    // The filter shows new alerts only: the two are gone from it, and the API says acknowledged.
    await expect.poll(() => rows.count()).toBe(2);
    const emails = (await alerts()).filter((a) => a.status === 'acknowledged').map((a) => a.leak_record.email);
    expect(emails).toHaveLength(2);
    for (const email of emails) expect(`${first}${second}`).toContain(email);
    // One more, on the focused row without a selection: r resolves it.
    await page.locator('h1').click();
    await tabToRow(page);
    const third = await page.evaluate(() => document.activeElement?.textContent);
    await page.keyboard.press('r');
    await page.getByText('1 alert resolved.').waitFor();
    const resolved = (await alerts()).find((a) => a.status === 'resolved')!;
    expect(third).toContain(resolved.leak_record.email);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('triages with the mouse from the status filter, and Enter opens an alert', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, '/alerts/');
    await page.getByLabel('Status').selectOption('acknowledged');
    await expect.poll(() => page.locator('tbody tr[data-row]').count()).toBe(2);
    await page.getByLabel('Select every row on this page').check();
    await page.getByRole('button', { name: 'False positive' }).click();
    await page.getByText('2 alerts marked false positive.').waitFor();
    expect((await alerts()).filter((a) => a.status === 'false_positive')).toHaveLength(2);
    expect(page.url()).toContain('status=acknowledged');
    await page.getByLabel('Status').selectOption('');
    const row = page.locator('tbody tr[data-row]').first();
    await row.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/alerts\/[0-9a-f-]{36}\/$/);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows an alert's record as the API masks it, leak text as text, its source; escalates it to an incident", async () => {
    const dave = (await alerts()).find((a) => a.leak_record.email.startsWith('dave@'))!;
    const alice = (await alerts()).find((a) => a.leak_record.email.startsWith('alice@'))!;
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, `/alerts/${dave.id}/`);
    // The record's name is an HTML image tag with a script: it shows as its characters, nothing runs.
    await page.getByText(XSS).first().waitFor();
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');
    await page.getByText(h.seeded.source.name).waitFor();

    await page.goto(`${h.base}/alerts/${alice.id}/`);
    await page.getByText('h************2').waitFor();
    expect(await page.textContent('main')).not.toContain('hunter2hunter2');
    await page.getByLabel('Note').fill('Password reset forced for alice');
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Note saved.').waitFor();
    await page.getByRole('button', { name: 'Escalate to an incident' }).click();
    await page.waitForURL(/\/incidents\/[0-9a-f-]{36}\/$/);
    await page.getByRole('heading', { name: /Our domain: .* in / }).waitFor();
    const escalated = (await alerts()).find((a) => a.id === alice.id)!;
    expect(escalated.incident).toBe(page.url().split('/').at(-2));
    expect(json(await h.api(h.seeded.team.tokens.analyst, 'GET', `/api/v1/monitoring/alerts/${alice.id}/`)).note).toBe('Password reset forced for alice');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a viewer sees the inbox without any write control; the pages pass axe at both sizes', async () => {
    const { page, context } = await h.page();
    await h.signIn(page, h.seeded.team.members.viewer.username, undefined, '/alerts/');
    await page.locator('tbody tr[data-row]').first().waitFor();
    expect(await page.getByRole('checkbox').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0);
    const first = (await alerts())[0]!;
    await page.goto(`${h.base}/alerts/${first.id}/`);
    await page.getByText('Leak record').waitFor();
    expect(await page.getByRole('button', { name: /Escalate|Resolve|Save note/ }).count()).toBe(0);
    await context.close();

    await h.survey(h.seeded.team.members.analyst.username, '/alerts/', 'alerts', (p) => p.locator('tbody tr[data-row]').first().waitFor());
    await h.survey(h.seeded.team.members.analyst.username, `/alerts/${first.id}/`, 'alert', (p) => p.getByText('Leak record').waitFor());
  });
});
