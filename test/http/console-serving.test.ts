import fs from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGES } from '../../console/src/pages.js';
import { CONSOLE_CSP, CONSOLE_DIR, CONSOLE_PAGES } from '../../src/http/console.js';
import { buildTestApp, type TestApp } from '../helpers/build-app.js';

// `npm test` builds the console first (pretest); a checkout that has not built it skips this.
describe.skipIf(!fs.existsSync(`${CONSOLE_DIR}index.html`))('the console, as served', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('serves every page the console routes, and only those', () => {
    expect(Object.values(PAGES).sort()).toEqual([...CONSOLE_PAGES].sort());
  });

  it('answers its index page at each of its paths, never cached, under a CSP without inline or eval scripts', async () => {
    const index = fs.readFileSync(`${CONSOLE_DIR}index.html`, 'utf8');
    for (const page of CONSOLE_PAGES) {
      const res = await t.app.inject({ method: 'GET', url: page.replace(':id', '0193e0a4-0000-7000-8000-000000000000') });
      expect([page, res.statusCode, res.headers['content-type'], res.headers['cache-control']]).toEqual([page, 200, 'text/html; charset=utf-8', 'no-cache']);
      expect(res.body).toBe(index);
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    }
    expect(CONSOLE_CSP).toMatch(/script-src 'self';/);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-(inline|eval)/);
    // Its script and style are files of this server: nothing inline, nothing from elsewhere.
    expect(index).not.toMatch(/<script>|<style>|https?:\/\//);
    // Without the slash: to the slashed page, as the API's paths.
    const bare = await t.app.inject({ method: 'GET', url: '/alerts' });
    expect([bare.statusCode, bare.headers.location]).toEqual([308, '/alerts/']);
  });

  it('serves the hashed assets for a year as immutable, compressed as the browser asks, and 404 problem+json for any other', async () => {
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(fs.readFileSync(`${CONSOLE_DIR}index.html`, 'utf8'))![1]!;
    const plain = await t.app.inject({ method: 'GET', url: script });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-type']).toMatch(/javascript/);
    const gz = await t.app.inject({ method: 'GET', url: script, headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    const br = await t.app.inject({ method: 'GET', url: script, headers: { 'accept-encoding': 'br, gzip' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
    const missing = await t.app.inject({ method: 'GET', url: '/assets/nothing-here.js' });
    expect([missing.statusCode, missing.headers['content-type']]).toEqual([404, 'application/problem+json; charset=utf-8']);
  });
});
