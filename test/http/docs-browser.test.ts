import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-app.js';

// Renders the docs pages in Debian's headless Chromium (installed by .ci/run); skipped where there is none.
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = fs.existsSync(CHROMIUM);

describe.skipIf(!hasChromium)('docs pages in a real browser', () => {
  let t: TestApp;
  let base: string;
  let browser: import('playwright-core').Browser;

  beforeAll(async () => {
    t = await buildTestApp();
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(path: string) {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    // Every request stays on this server and succeeds (the favicon a browser asks for by itself too).
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`);
    });
    // Anything leaving this server would be a CDN dependency: fail it.
    await page.route('**/*', (route) => (route.request().url().startsWith(base) || route.request().url().startsWith('data:') || route.request().url().startsWith('blob:') ? route.continue() : route.abort()));
    await page.goto(`${base}${path}`);
    return { page, problems };
  }

  it('renders Swagger UI with the API operations, offline, without CSP errors', async () => {
    const { page, problems } = await open('/api/docs/');
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
    expect(await page.textContent('body')).toContain('threatmon API');
    if (process.env.THREATMON_SCREENSHOTS) await page.screenshot({ path: `${process.env.THREATMON_SCREENSHOTS}/swagger.png` });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('renders ReDoc with the API operations, offline, without CSP errors', async () => {
    const { page, problems } = await open('/api/redoc/');
    await page.waitForSelector('h1', { timeout: 20_000 });
    await page.waitForFunction(() => document.body.innerText.includes('List incidents'), null, { timeout: 20_000 });
    expect(await page.textContent('h1')).toContain('threatmon API');
    if (process.env.THREATMON_SCREENSHOTS) await page.screenshot({ path: `${process.env.THREATMON_SCREENSHOTS}/redoc.png` });
    // ReDoc 2.5's sidebar footer names Redocly's logo on their CDN: served ours from here instead.
    await page.waitForFunction(() => [...document.images].some((i) => i.complete && i.naturalWidth > 0 && i.src.endsWith('/favicon.svg')), null, { timeout: 20_000 });
    const favicon = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    expect([favicon.statusCode, favicon.headers['content-type'], favicon.rawPayload.subarray(0, 4)]).toEqual([200, 'image/x-icon', Buffer.from([0, 0, 1, 0])]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
