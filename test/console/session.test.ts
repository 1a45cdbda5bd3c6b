import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, PASSWORD } from '../helpers/build-app.js';
import { ConsoleHarness, hasChromium } from '../helpers/console.js';

// Journeys 1 and 2: signing in and out, a session that ends under an open form, the overview.
describe.skipIf(!hasChromium)('console: the session and the overview', () => {
  const h = new ConsoleHarness();
  beforeAll(() => h.start(), 120_000);
  afterAll(() => h.stop());

  it('signs in with a wrong then a right password, survives a reload, signs out everywhere the API does', async () => {
    const { page, context, problems } = await h.page();
    const analyst = h.seeded.team.members.analyst.username;
    await page.goto(`${h.base}/alerts/`);
    // Not signed in: the sign-in page, which will come back here.
    await page.waitForURL(/\/sign-in\/\?next=%2Falerts%2F/);
    await page.getByLabel('Username').fill(analyst);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('No active account found');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${h.base}/alerts/`);
    await page.getByRole('heading', { name: 'Alerts' }).waitFor();

    // The tokens are in HttpOnly cookies: no script of the page can read them.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite]).sort()).toEqual([
      ['threatmon_access', true, 'Strict'],
      ['threatmon_refresh', true, 'Strict'],
    ]);

    await page.reload();
    await page.getByRole('heading', { name: 'Alerts' }).waitFor();
    expect(page.url()).toBe(`${h.base}/alerts/`);

    // Sign out: the session ends in the API too (its access token no longer works anywhere).
    const access = cookies.find((c) => c.name === 'threatmon_access')!.value;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${h.base}/sign-in/`);
    const after = await h.t.app.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${access}` } });
    expect(after.statusCode).toBe(401);
    await page.goto(`${h.base}/incidents/`);
    await page.waitForURL(/\/sign-in\//);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a cookie counts only with the console header, and the session endpoints refuse a request without it (CSRF)', async () => {
    const login = await h.t.app.inject({ method: 'POST', url: '/api/v1/auth/session/', payload: { username: h.seeded.team.members.viewer.username, password: PASSWORD } });
    expect([login.statusCode, json(login).code]).toEqual([403, 'permission_denied']);
    const ok = await h.t.app.inject({ method: 'POST', url: '/api/v1/auth/session/', headers: { 'x-threatmon-console': '1' }, payload: { username: h.seeded.team.members.viewer.username, password: PASSWORD } });
    expect(ok.statusCode).toBe(200);
    const cookie = ok.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    // The browser sends the cookie along with a cross-site form's request; without the header it proves nothing.
    const forged = await h.t.app.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { cookie } });
    expect(forged.statusCode).toBe(401);
    const console = await h.t.app.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { cookie, 'x-threatmon-console': '1' } });
    expect(json(console).username).toBe(h.seeded.team.members.viewer.username);
  });

  it('an expired session sends the person to sign in and back, with the unsaved form kept', async () => {
    const { page, context, problems } = await h.page();
    await h.signIn(page, h.seeded.team.members.analyst.username, PASSWORD, '/incidents/');
    await page.getByLabel('Title', { exact: true }).fill('Credential stuffing from the new combolist');
    await page.getByLabel('Tags').fill('stuffing, combolist');
    // Eight days later (the refresh token lives seven): the API refuses both cookies.
    h.t.clock.advance(8 * 24 * 3600);
    await page.getByRole('button', { name: 'Create incident' }).click();
    await page.waitForURL(/\/sign-in\/\?next=%2Fincidents%2F/);
    await page.getByText('Your session ended').waitFor();
    await page.getByLabel('Username').fill(h.seeded.team.members.analyst.username);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${h.base}/incidents/`);
    expect(await page.getByLabel('Title', { exact: true }).inputValue()).toBe('Credential stuffing from the new combolist');
    expect(await page.getByLabel('Tags').inputValue()).toBe('stuffing, combolist');
    await page.getByRole('button', { name: 'Create incident' }).click();
    await page.getByRole('heading', { name: 'Credential stuffing from the new combolist' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('changes the password: every session ends, the new password signs in', async () => {
    const user = await h.t.createUser(h.seeded.team.org, 'analyst');
    const { page, context, problems } = await h.page();
    await h.signIn(page, user.username, PASSWORD, '/account/');
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password', { exact: true }).fill('a much longer passphrase 42');
    await page.getByLabel('New password again').fill('a much longer passphrase 42');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL(/\/sign-in\//);
    await h.signIn(page, user.username, 'a much longer passphrase 42');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the overview shows open alerts by severity, the chart, monitors, tokens, deliveries and the rate limit; accessible at both sizes', async () => {
    await h.survey(h.seeded.team.members.admin.username, '/', 'overview', async (page) => {
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      // The seeded records raised 4 alerts: 1 high (a plaintext password), 1 medium (a hash), 2 low.
      const tiles = page.getByRole('region', { name: 'Open alerts by severity' }).locator('.tiles a');
      await expect.poll(() => tiles.allTextContents()).toEqual(['0 critical', '1 high', '1 medium', '2 low']);
      await page.locator('.chart canvas').first().waitFor();
      await page.getByRole('region', { name: 'Monitors' }).getByRole('link', { name: h.seeded.monitor.name }).waitFor();
      await page.getByText('Rate limits are off on this server.').waitFor();
      await page.getByText('is healthy').waitFor();
    });
    await h.survey(null, '/sign-in/', 'sign-in', async (page) => page.getByRole('button', { name: 'Sign in' }).waitFor());
    await h.survey(h.seeded.team.members.viewer.username, '/account/', 'account', async (page) => page.getByRole('button', { name: 'Change password' }).waitFor());
  });

  it('goes back only to a page of its own after signing in (no open redirect)', async () => {
    const { page, context } = await h.page();
    await page.goto(`${h.base}/sign-in/?next=${encodeURIComponent('//evil.example/phish')}`);
    await page.getByLabel('Username').fill(h.seeded.team.members.viewer.username);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${h.base}/`);
    await context.close();
  });
});
