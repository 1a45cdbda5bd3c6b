import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { buildTestApp, json, PASSWORD, type TestApp, type TestTeam } from './build-app.js';

/**
 * The console in Debian's headless Chromium (installed by .ci/run; the tests are skipped where it
 * is not): a served test app, a seeded organization, a browser, and what every page is held to.
 */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = fs.existsSync(CHROMIUM) && fs.existsSync(path.resolve(import.meta.dirname, '../../dist/console/index.html'));
export const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
export const SCREENSHOTS = process.env.THREATMON_SCREENSHOTS ?? path.resolve(import.meta.dirname, '../../.ci/out/screenshots');
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** A leak line that would run script if it were ever written into the page as HTML. */
export const XSS = '<img src=x onerror="document.title=\'pwned\'">';

export interface Seeded {
  team: TestTeam;
  source: { id: string; name: string };
  monitor: { id: string; name: string };
}

export class ConsoleHarness {
  t!: TestApp;
  base!: string;
  browser!: Browser;
  seeded!: Seeded;

  async start(env: Record<string, string> = {}) {
    this.t = await buildTestApp({ THREATMON_RATE_LIMITS: 'off', ...env });
    this.base = await this.t.app.listen({ host: '127.0.0.1', port: 0 });
    const { chromium } = await import('playwright-core');
    this.browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    this.seeded = await this.seed();
    return this;
  }

  async stop() {
    await this.browser?.close();
    await this.t?.close();
  }

  /** As a client would: an organization whose owner is staff, a source, a domain monitor and its alerts. */
  private async seed(): Promise<Seeded> {
    const team = await this.t.createTeam('enterprise', `console-${Math.random().toString(36).slice(2, 8)}`);
    await this.t.db.updateTable('users').set({ is_staff: true }).where('id', '=', team.members.owner.id).execute();
    const owner = team.tokens.owner;
    const domain = `${team.org.name}.example`;
    const source = json(await this.api(owner, 'POST', '/api/v1/leaks/sources/', { name: `${team.org.name} breach`, kind: 'breach', domain: 'shop.example', breach_date: '2026-03-01' }));
    const monitor = json(await this.api(owner, 'POST', '/api/v1/monitoring/', { name: 'Our domain', type: 'domain', terms: [domain], backfill: false }));
    const records = [
      { email: `alice@${domain}`, password: 'hunter2hunter2', leaked_at: '2026-03-01T00:00:00Z' },
      { email: `bob@${domain}`, username: 'bob', leaked_at: '2026-03-02T00:00:00Z' },
      { email: `carol@${domain}`, password_sha1: 'A94A8FE5CCB19BA61C4C0873D391E987982FBBD3' },
      { email: `dave@${domain}`, full_name: XSS, extra: { note: XSS } },
    ];
    const ingest = await this.api(owner, 'POST', `/api/v1/leaks/sources/${source.id}/records/`, records);
    expect(json(ingest)).toMatchObject({ accepted: 4, alerts_raised: 4 });
    return { team, source: { id: source.id, name: source.name }, monitor: { id: monitor.id, name: monitor.name } };
  }

  api(token: string, method: string, url: string, payload?: unknown) {
    return this.t.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  }

  /**
   * A page in a fresh browser context (its own cookies), which fails the test on any script error,
   * any console error (a CSP refusal is one), any failed request and any request leaving this server.
   */
  async page(size: keyof typeof SIZES = 'desktop'): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
    const context = await this.browser.newContext({ viewport: SIZES[size], acceptDownloads: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      // A 401 answered while a session is renewed, and the 4xx a test provokes on purpose, are expected; the rest is not.
      if (m.type() === 'error' && !/status of (401|403|404|409|400)/.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('requestfailed', (r) => {
      if (!r.failure()?.errorText.includes('ERR_ABORTED')) problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`);
    });
    await page.route('**/*', (route) => (route.request().url().startsWith(this.base) || /^(data|blob):/.test(route.request().url()) ? route.continue() : route.abort()));
    return { page, context, problems };
  }

  /** Signs in through the form, as a person does. */
  async signIn(page: Page, username: string, password = PASSWORD, path = '/') {
    await page.goto(`${this.base}${path}`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** axe-core on the page as it is: no serious or critical violation. */
  async accessible(page: Page, what: string) {
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run: (o: object) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run({ resultTypes: ['violations'] });
      return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
    });
    expect(violations, `axe on ${what}`).toEqual([]);
  }

  /** A screenshot for people to look at (not compared): <name>-<size>.png. */
  async shoot(page: Page, name: string) {
    const size = page.viewportSize()?.width === SIZES.phone.width ? 'phone' : 'desktop';
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${size}.png`), fullPage: true });
  }

  /** The page at both sizes: checked by axe and photographed (signed in as `username`, or not signed in). */
  async survey(username: string | null, pagePath: string, name: string, ready: (page: Page) => Promise<unknown>) {
    for (const size of ['desktop', 'phone'] as const) {
      const { page, context, problems } = await this.page(size);
      if (username) await this.signIn(page, username, PASSWORD, pagePath);
      else await page.goto(`${this.base}${pagePath}`);
      await ready(page);
      await this.accessible(page, `${name} (${size})`);
      // Nothing wider than the screen: only a wide table scrolls, inside its own box.
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} (${size}) is wider than the screen`).toBeLessThanOrEqual(SIZES[size].width);
      await this.shoot(page, name);
      expect(problems, `${name} (${size})`).toEqual([]);
      await context.close();
    }
  }
}
