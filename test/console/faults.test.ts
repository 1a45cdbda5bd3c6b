import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleHarness, hasChromium } from '../helpers/console.js';

// Bad input and faults, as a person meets them: a 429, the server gone and back, a refused field.
describe.skipIf(!hasChromium)('console: faults', { timeout: 120_000 }, () => {
  const h = new ConsoleHarness();
  beforeAll(() => h.start(), 120_000);
  afterAll(() => h.stop());

  it('a 429 says when to try again', async () => {
    const { page, context } = await h.page();
    const user = await h.t.createUser(h.seeded.team.org, 'viewer');
    await page.goto(`${h.base}/sign-in/`);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill('wrong password, again and again');
    // Ten failures answer 401; the eleventh attempt, 429 with the seconds to wait.
    for (let i = 1; i <= 11; i++) {
      const answered = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/session/'));
      await page.getByRole('button', { name: 'Sign in' }).click();
      expect((await answered).status()).toBe(i <= 10 ? 401 : 429);
    }
    await page.getByRole('alert').filter({ hasText: /Try again in \d+ s\./ }).waitFor();
    await context.close();
  });

  it('shows a banner while the server cannot be reached, and recovers by itself when it is back', async () => {
    const { page, context } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, '/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    // The server gone, as the browser sees it: every connection to it refused.
    const gone = /\/(api|health)\//;
    await page.route(gone, (route) => route.abort('connectionrefused'));
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.getByText('threatmon cannot be reached: retrying by itself.').waitFor();
    await page.unroute(gone);
    // Back: the banner goes and the page reads its data again, with nothing clicked.
    await page.getByText('threatmon cannot be reached').waitFor({ state: 'detached' });
    await expect.poll(() => page.locator('tbody tr[data-row]').count()).toBe(4);
    await context.close();
  });

  it("puts the API's objection to a field beside that field, and keeps what was typed", async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, undefined, '/monitors/');
    const form = page.getByRole('form', { name: 'New monitor' });
    await form.getByLabel('Name', { exact: true }).fill('Typo');
    await form.getByLabel('Terms').fill('example.org\ncom');
    await form.getByRole('button', { name: 'Create monitor' }).click();
    const terms = form.locator('.field.invalid', { has: page.getByLabel('Terms') });
    await terms.locator('.field-error').filter({ hasText: /^1: must have at least two labels/ }).waitFor();
    expect(await form.getByLabel('Terms').getAttribute('aria-invalid')).toBe('true');
    expect(await form.getByLabel('Terms').inputValue()).toBe('example.org\ncom');
    expect(await form.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    await h.accessible(page, 'a refused form');
    await h.shoot(page, 'form-error');
    expect(problems).toEqual([]);
    await context.close();
  });
});
