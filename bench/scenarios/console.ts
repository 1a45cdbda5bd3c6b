import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_PASSWORD, apiOf, freshDatabaseUrl, type Result, ROOT, startServer, stop } from '../harness.js';

const ALERTS = Number(process.env.BENCH_CONSOLE_ALERTS ?? 10_000);
const RUNS = 7;
const CHROMIUM = '/usr/bin/chromium';
const CONSOLE = path.join(ROOT, 'dist', 'console');

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
const row = (scenario: string, ms: number[]): Result => ({ scenario, requests_per_sec: 0, latency_p50_ms: Math.round(quantile(ms, 0.5)), latency_p99_ms: Math.round(Math.max(...ms)), non_2xx: 0, errors: 0 });

/**
 * The console (issue figures): the JavaScript and CSS a first visit downloads, gzip (the built
 * files' .gz, as served to a browser that takes gzip; what Chromium took, Brotli, beside it); the
 * inbox's first render with 10,000 open alerts (navigation to the first row drawn); a leak search's
 * results drawn after the API's answer (its response's end, from Resource Timing, to the rows in
 * the page). Each timing is RUNS runs: median (p50) and slowest (p99 column).
 */
export const consoleScenarios: Record<string, () => Promise<Result[]>> = {
  async console() {
    if (!fs.existsSync(CHROMIUM) || !fs.existsSync(path.join(CONSOLE, 'index.html'))) {
      console.log('console: skipped (needs /usr/bin/chromium and a built console: npm run build)');
      return [];
    }
    const index = fs.readFileSync(path.join(CONSOLE, 'index.html'), 'utf8');
    const assets = [...index.matchAll(/(?:src|href)="\/assets\/([^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
    const gzip = assets.reduce((n, a) => n + fs.statSync(path.join(CONSOLE, 'assets', `${a}.gz`)).size, 0);
    console.log(`console first visit (sign-in and inbox load the same files): ${assets.join(', ')}: ${(gzip / 1024).toFixed(1)} KB gzip (limit 200 KB)`);

    const dbUrl = await freshDatabaseUrl('console');
    const s = await startServer('console', {}, dbUrl);
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    try {
      const api = apiOf(s);
      const source = await api('POST', '/leaks/sources/', { name: `console bench ${Date.now()}` });
      await api('POST', '/monitoring/', { name: 'bench domain', type: 'domain', terms: ['bench-console.example'], backfill: false });
      for (let i = 0; i < ALERTS; i += 5000) {
        const records = Array.from({ length: Math.min(5000, ALERTS - i) }, (_, j) => ({ email: `user${i + j}@bench-console.example`, password: `pw-${i + j}-secret` }));
        await api('POST', `/leaks/sources/${source.id}/records/`, records);
      }
      const open = (await api('GET', '/monitoring/alerts/?status=new,acknowledged&page_size=1')).count as number;
      console.log(`console: ${open.toLocaleString()} open alerts`);

      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${s.url}/sign-in/`);
      const firstVisit = await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => /\/assets\//.test(e.name)).reduce((n, e) => n + (e as PerformanceResourceTiming).encodedBodySize, 0));
      console.log(`console first visit as Chromium took it (Brotli): ${(firstVisit / 1024).toFixed(1)} KB`);
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();

      const inbox: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        await page.goto('about:blank');
        const began = Date.now();
        await page.goto(`${s.url}/alerts/?status=new,acknowledged`);
        await page.locator('tbody tr[data-row]').first().waitFor();
        inbox.push(Date.now() - began);
      }
      const drawn: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        await page.goto(`${s.url}/leaks/`);
        await page.getByLabel('E-mail').fill(`user${i * 997}@bench-console.example`);
        const gap = page.evaluate(
          () =>
            new Promise<number>((resolve) => {
              const seen = new MutationObserver(() => {
                if (!document.querySelector('tbody tr[data-row]')) return;
                seen.disconnect();
                const drawnAt = performance.now();
                const answer = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/leaks/search/')).at(-1) as PerformanceResourceTiming;
                resolve(drawnAt - answer.responseEnd);
              });
              seen.observe(document.body, { childList: true, subtree: true });
            }),
        );
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        drawn.push(await gap);
      }
      console.log(`console inbox first render (${open.toLocaleString()} open alerts): median ${quantile(inbox, 0.5)} ms, slowest ${Math.max(...inbox)} ms (limit 1,000 ms)`);
      console.log(`console search results drawn after the answer: median ${quantile(drawn, 0.5).toFixed(1)} ms, slowest ${Math.max(...drawn).toFixed(1)} ms (limit 100 ms)`);
      return [row('console first visit KB gzip (p50 column)', [gzip / 1024]), row('console inbox first render ms', inbox), row('console search drawn after answer ms', drawn)];
    } finally {
      await browser.close();
      await stop(s);
    }
  },
};
