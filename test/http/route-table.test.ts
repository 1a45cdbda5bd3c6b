import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

/** The endpoints that take no token (API.md section 1; the console's session): everything else under /api/v1 needs one. */
const PUBLIC = new Set(['/api/v1/auth/token/', '/api/v1/auth/token/refresh/', '/api/v1/auth/token/verify/', '/api/v1/auth/token/revoke/', '/api/v1/auth/session/', '/api/v1/auth/session/refresh/']);

describe('every route under /api/v1 but the token endpoints needs a token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('answers 401 problem+json without one, found by walking the routes (a new module is covered the day it lands)', async () => {
    const routes = t.app.routeTable.filter((r) => r.url.startsWith('/api/v1/') && !PUBLIC.has(r.url));
    // Enough routes that a broken walk cannot pass unnoticed.
    expect(routes.length).toBeGreaterThan(40);
    for (const { method, url } of routes) {
      const path = url.replace(/:prefix/g, '0BEEC').replace(/:[A-Za-z]+/g, '0193e0a4-0000-7000-8000-000000000000');
      const res = await t.inject({ method: method as 'GET', url: path, ...(['POST', 'PATCH', 'PUT'].includes(method) ? { payload: {} } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      if (method !== 'HEAD') {
        expect(res.headers['content-type'], `${method} ${url}`).toContain('application/problem+json');
        expect(json(res).code).toBe('not_authenticated');
      }
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    for (const url of PUBLIC) expect(t.app.routeTable.some((r) => r.url === url)).toBe(true);
  });
});
