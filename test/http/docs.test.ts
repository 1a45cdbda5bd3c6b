import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/modules/events/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

describe('OpenAPI and documentation pages', () => {
  let t: TestApp;
  let spec: any;

  beforeAll(async () => {
    t = await buildTestApp();
    spec = json(await t.inject({ method: 'GET', url: '/api/schema/' }));
  });
  afterAll(() => t.close());

  it('serves a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(spec);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info).toMatchObject({ title: 'threatmon API', version: '1.0.0' });
  });

  it('names and describes every operation (operationIds as Django REST Framework names them, once), and declares its tags, its public operations and its wildcard', () => {
    const ops = Object.entries(spec.paths as Record<string, Record<string, any>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z0-9]+(_[a-z0-9]+)*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const idOf = (method: string, path: string) => spec.paths[path][method].operationId;
    expect(idOf('get', '/api/v1/incidents/')).toBe('incidents_list');
    expect(idOf('post', '/api/v1/incidents/')).toBe('incidents_create');
    expect(idOf('get', '/api/v1/incidents/{id}/')).toBe('incidents_retrieve');
    expect(idOf('patch', '/api/v1/incidents/{id}/')).toBe('incidents_partial_update');
    expect(idOf('delete', '/api/v1/incidents/{id}/')).toBe('incidents_destroy');
    expect(idOf('post', '/api/v1/monitoring/alerts/{id}/escalate/')).toBe('monitoring_alerts_escalate_create');
    expect(idOf('get', '/hibp/api/v3/breachedaccount/{account}')).toBe('hibp_breachedaccount_retrieve');
    const declared = new Set((spec.tags as Array<{ name: string }>).map((tag) => tag.name));
    for (const { path, method, op } of ops) {
      for (const tag of op.tags ?? []) expect(declared.has(tag), `${method} ${path} tag ${tag}`).toBe(true);
      expect(Array.isArray(op.security), `${method} ${path} declares its security`).toBe(true);
      expect(op.description, `${method} ${path} has a description`).toBeTruthy();
      expect(path).not.toContain('{*}');
    }
    for (const path of ['/health/', '/api/schema/', '/api/docs/', '/metrics', '/t/{key}/', '/t/{key}/{path}']) expect(spec.paths[path].get.security, path).toEqual([]);
    expect(spec.paths['/t/{key}/'].head.operationId).toBe('t_head');
    expect(Object.keys(spec.webhooks).sort()).toEqual([...EVENT_TYPES, 'ping'].sort());
    expect(spec.info.license.name).toContain('UNLICENSED');
    expect(spec.info.contact.name).toBeTruthy();
  });

  it('names the bearer scheme and requires it on authenticated routes only', () => {
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(spec.paths['/api/v1/auth/me/'].get.security).toEqual([{ bearerAuth: [] }, { apiKey: [] }]);
    expect(spec.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(spec.paths['/hibp/api/v3/breachedaccount/{account}'].get.security).toEqual([{ hibpApiKey: [] }]);
    expect(spec.paths['/api/v1/auth/token/'].post.security).toEqual([]);
  });

  it('documents the problem+json error schema and uses it for error responses', () => {
    expect(spec.components.schemas.Problem.properties).toHaveProperty('detail');
    expect(spec.components.schemas.Problem.properties).toHaveProperty('code');
    const responses = spec.paths['/api/v1/users/'].post.responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409', '429']));
    expect(JSON.stringify(responses['403'])).toContain('#/components/schemas/Problem');
  });

  it('documents every error as application/problem+json, and 413, 415, 500 and 503 where they can occur', () => {
    for (const [path, ops] of Object.entries(spec.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          if (Number(status) < 400 || (path === '/health/' && status === '503')) continue;
          // The Have I Been Pwned surface answers as Have I Been Pwned does: JSON {statusCode, message}, or no body.
          const range = path.startsWith('/hibp/pwnedpasswords/') && status === '400';
          const hibp = range ? ['text/plain'] : ['400', '404'].includes(status) ? [] : ['application/json'];
          // TAXII answers its error messages in its own media type.
          const expected = path.startsWith('/taxii2/') ? ['application/taxii+json;version=2.1'] : path.startsWith('/hibp/') ? hibp : ['application/problem+json'];
          expect(Object.keys(response.content ?? {}), `${method} ${path} ${status}`).toEqual(expected);
        }
        expect(op.responses, `${method} ${path}`).toHaveProperty('500');
        if (path.startsWith('/api/v1/')) expect(op.responses, `${method} ${path}`).toHaveProperty('503');
        if (op.requestBody) for (const s of ['400', '413', '415']) expect(op.responses, `${method} ${path}`).toHaveProperty(s);
      }
    }
  });

  it('documents the response headers: X-Request-Id everywhere, RateLimit-* when authenticated, Retry-After on 429, ETag on single records', () => {
    const incident = spec.paths['/api/v1/incidents/{id}/'];
    expect(incident.get.responses['200'].headers).toMatchObject({
      'x-request-id': { required: true },
      etag: { required: true },
      'ratelimit-limit': { schema: { type: 'integer' } },
      'ratelimit-remaining': {},
      'ratelimit-reset': {},
      'ratelimit-policy': {},
    });
    expect(incident.get.responses['304'].headers).toHaveProperty('etag');
    expect(incident.get.responses['429'].headers['retry-after']).toMatchObject({ required: true });
    expect(incident.get.responses['401'].headers).not.toHaveProperty('ratelimit-limit');
    expect(spec.paths['/api/v1/incidents/'].get.responses['200'].headers).not.toHaveProperty('etag');
    const login = spec.paths['/api/v1/auth/token/'].post.responses;
    expect(login['200'].headers).toHaveProperty('x-request-id');
    expect(login['200'].headers).not.toHaveProperty('ratelimit-limit');
    expect(login['429'].headers).toHaveProperty('retry-after');
  });

  it('lists the service pages outside the API: health, this document, the docs pages and metrics', () => {
    expect(spec.paths['/health/'].get.responses).toHaveProperty('503');
    expect(spec.paths['/api/schema/'].get.responses['200'].content).toHaveProperty('application/json');
    expect(spec.paths['/api/docs/'].get.responses['200'].content).toHaveProperty('text/html');
    expect(spec.paths['/api/redoc/'].get.responses['200'].content).toHaveProperty('text/html');
    expect(spec.paths['/metrics'].get.description).toContain('THREATMON_METRICS');
  });

  it('documents every list parameter with a description', () => {
    const params = spec.paths['/api/v1/users/'].get.parameters as Array<{ name: string; in: string; description?: string }>;
    const names = params.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['page', 'page_size', 'ordering', 'search', 'role', 'is_active', 'created_after', 'updated_before']));
    for (const p of params) expect(p.description, p.name).toBeTruthy();
    const ordering = params.find((p) => p.name === 'ordering') as { schema: { enum: string[] } } | undefined;
    expect(ordering?.schema.enum).toContain('-created_at');
  });

  it('declares the 308 that each slashed path answers without its slash, and the server answers it', async () => {
    for (const [path, ops] of Object.entries(spec.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!path.endsWith('/') || path === '/') continue;
        expect(op.responses['308']?.headers?.location, `${method} ${path}`).toMatchObject({ required: true });
      }
    }
    for (const [path, method] of [['/api/v1/incidents', 'POST'], ['/taxii2', 'GET'], ['/api/schema', 'GET']] as const) {
      const res = await t.inject({ method, url: `${path}?page=2` });
      expect(res.statusCode, path).toBe(308);
      expect(res.headers.location).toBe(`${path}/?page=2`);
    }
  });

  it('lists every API route', () => {
    const routes = Object.entries(spec.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`));
    for (const r of [
      'POST /api/v1/auth/token/',
      'POST /api/v1/auth/token/refresh/',
      'POST /api/v1/auth/token/verify/',
      'POST /api/v1/auth/token/revoke/',
      'GET /api/v1/auth/me/',
      'POST /api/v1/auth/password/',
      'GET /api/v1/organization/',
      'PATCH /api/v1/organization/',
      'GET /api/v1/organization/usage/',
      'GET /api/v1/users/',
      'POST /api/v1/users/',
      'GET /api/v1/users/{id}/',
      'PATCH /api/v1/users/{id}/',
      'DELETE /api/v1/users/{id}/',
      'GET /api/v1/organizations/',
      'POST /api/v1/organizations/',
      'GET /api/v1/audit-log/',
      'GET /health/',
    ]) {
      expect(routes).toContain(r);
    }
  });

  it('serves Swagger UI locally with its own CSP and no external origin', async () => {
    const page = await t.inject({ method: 'GET', url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).not.toMatch(/https?:\/\/(?!localhost)[a-z]/i);
    const init = await t.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain('/api/schema/');
    const bundle = await t.inject({ method: 'GET', url: '/api/docs/static/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
  });

  it('redirects /api/docs to /api/docs/ like every other path, and answers 404 for a missing static file', async () => {
    const bare = await t.inject({ method: 'GET', url: '/api/docs?x=1' });
    expect(bare.statusCode).toBe(308);
    expect(bare.headers.location).toBe('/api/docs/?x=1');
    for (const url of ['/api/docs/static/missing.js', '/api/docs/static/nope/deeper.css']) {
      const missing = await t.inject({ method: 'GET', url });
      expect(missing.statusCode, url).toBe(404);
      expect(missing.headers['content-type']).toContain('application/problem+json');
    }
  });

  it('serves ReDoc from the local bundle', async () => {
    const page = await t.inject({ method: 'GET', url: '/api/redoc/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<redoc spec-url="/api/schema/">');
    expect(page.body).toContain('src="/api/redoc/redoc.standalone.js"');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("worker-src 'self' blob:");
    expect(csp).not.toMatch(/https?:/);
    const js = await t.inject({ method: 'GET', url: '/api/redoc/redoc.standalone.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('javascript');
    expect(js.body.length).toBeGreaterThan(100_000);
  });
});
