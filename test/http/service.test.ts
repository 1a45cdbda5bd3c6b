import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

describe('health and metrics', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const a of apps) await a.close().catch(() => {});
  });

  it('reports ok with the database up and redis off', async () => {
    const t = await buildTestApp();
    apps.push(t);
    const res = await t.inject({ method: 'GET', url: '/health/' });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ status: 'ok', database: 'ok', redis: 'off' });
  });

  it('answers 503 when the database is unreachable', async () => {
    const t = await buildTestApp();
    const db = t.app.deps.database;
    const broken = await buildTestApp({}, { database: { ...db, ping: async () => Promise.reject(new Error('down')) } });
    apps.push(t);
    const res = await broken.inject({ method: 'GET', url: '/health/' });
    expect(res.statusCode).toBe(503);
    expect(json(res)).toMatchObject({ status: 'unavailable', database: 'unavailable' });
  });

  it('hides /metrics unless THREATMON_METRICS=true', async () => {
    const off = await buildTestApp();
    apps.push(off);
    expect((await off.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    const on = await buildTestApp({ THREATMON_METRICS: 'true', THREATMON_PLAN_LIMITS: 'starter=1' });
    apps.push(on);
    const org = await on.createOrg('starter');
    await on.inject({ method: 'GET', url: '/health/' });
    await on.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' });
    await on.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' });
    const res = await on.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toContain('threatmon_http_requests_total{method="GET",route="/health/",status="200"} 1');
    expect(res.body).toContain('threatmon_rate_limit_rejections_total{kind="plan"} 1');
    expect(res.body).toContain('threatmon_http_request_duration_seconds_bucket');
    expect(res.body).toContain('threatmon_leak_records_ingested_total');
  });

  it("serves metrics Prometheus's own checker passes: no gauge named as a counter", async () => {
    const t = await buildTestApp({ THREATMON_METRICS: 'true' });
    apps.push(t);
    const org = await t.createOrg('enterprise');
    await t.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' });
    const text = (await t.inject({ method: 'GET', url: '/metrics' })).body;
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]);
    expect(types.length).toBeGreaterThan(10);
    expect(types.filter(([name, type]) => type !== 'counter' && name?.endsWith('_total'))).toEqual([]);
    expect(text).toContain('threatmon_nodejs_active_handles{');
    // promtool (Debian's prometheus package, which .ci/run installs) where it is installed: zero problems.
    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (promtool.error) return;
    expect(`${promtool.stdout}${promtool.stderr}`).toBe('');
    expect(promtool.status).toBe(0);
  });
});
