import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, type TestApp, type TestOrg } from '../helpers/build-app.js';

describe('API conventions (section 0)', () => {
  let t: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    t = await buildTestApp({}, {}, (app) => {
      app.get('/boom/', async () => {
        throw new Error('secret internal detail at /srv/app.ts: select * from users');
      });
      app.post(
        '/echo/',
        {
          schema: {
            body: Type.Object({ name: Type.String(), n: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
            response: { 200: Type.Object({ id: Type.String(), name: Type.String(), created_at: Type.String() }) },
          },
        },
        async (req) => ({ id: 'x', name: (req.body as { name: string }).name, created_at: 'now' }),
      );
    });
    org = await t.createOrg();
  });
  afterAll(() => t.close());

  it('redirects a path without its trailing slash with 308, keeping the query, before authentication', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/users?page=2&role=admin' });
    expect(res.statusCode).toBe(308);
    expect(res.headers.location).toBe('/api/v1/users/?page=2&role=admin');
    const post = await t.inject({ method: 'POST', url: '/api/v1/auth/token', payload: {} });
    expect(post.statusCode).toBe(308);
    expect(post.headers.location).toBe('/api/v1/auth/token/');
  });

  it('answers 404 problem+json for an unknown path, and does not redirect it', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(json(res)).toMatchObject({ status: 404, code: 'not_found', title: 'Not Found' });
    expect(json(res).detail).toBeTruthy();
  });

  it('answers 405 with an Allow header for a known path and another method', async () => {
    const res = await t.inject({ method: 'DELETE', url: '/api/v1/auth/token/' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(json(res).code).toBe('method_not_allowed');
  });

  it('answers 415 for a body that is not JSON', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/token/', headers: { 'content-type': 'text/plain' }, payload: 'username=a' });
    expect(res.statusCode).toBe(415);
    expect(json(res).code).toBe('unsupported_media_type');
  });

  it('accepts application/json with a charset', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/echo/',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ name: 'a' }),
    });
    expect(res.statusCode).toBe(200);
  });

  it('answers 400 malformed_json for broken JSON and for an empty JSON body', async () => {
    const bad = await t.inject({ method: 'POST', url: '/api/v1/auth/token/', headers: { 'content-type': 'application/json' }, payload: '{"username": ' });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).code).toBe('malformed_json');
    const empty = await t.inject({ method: 'POST', url: '/api/v1/auth/token/', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(400);
    expect(json(empty).code).toBe('malformed_json');
  });

  it('refuses unknown body fields with one error per field', async () => {
    const res = await t.inject({ method: 'POST', url: '/echo/', payload: { name: 'a', nmae: 'typo', n: 'x' } });
    expect(res.statusCode).toBe(400);
    const body = json(res);
    expect(body.code).toBe('validation_error');
    expect(body.errors).toEqual(
      expect.arrayContaining([
        { field: 'nmae', message: 'unknown field' },
        { field: 'n', message: 'must be integer' },
      ]),
    );
    expect(body.detail).toContain('nmae: unknown field');
  });

  it('names a missing required field', async () => {
    const res = await t.inject({ method: 'POST', url: '/echo/', payload: {} });
    expect(json(res).errors).toEqual([{ field: 'name', message: 'this field is required' }]);
  });

  it('ignores read-only fields sent in a body', async () => {
    const res = await t.inject({ method: 'POST', url: '/echo/', payload: { name: 'a', id: 'forged', created_at: 'then' } });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ id: 'x', name: 'a', created_at: 'now' });
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const res = await t.inject({ method: 'POST', url: '/echo/', payload: { name: 'x'.repeat(1024 * 1024 + 10) } });
    expect(res.statusCode).toBe(413);
    expect(json(res).code).toBe('payload_too_large');
  });

  it('hides internals behind a 500 and quotes the request id', async () => {
    const res = await t.inject({ method: 'GET', url: '/boom/', headers: { 'x-request-id': 'trace-123' } });
    expect(res.statusCode).toBe(500);
    const body = json(res);
    expect(body).toMatchObject({ code: 'internal_error', request_id: 'trace-123', detail: 'Internal server error.' });
    expect(res.body).not.toContain('secret');
    expect(res.body).not.toContain('select');
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const ok = await t.inject({ method: 'GET', url: '/health/', headers: { 'x-request-id': 'abc.DEF_1-2' } });
    expect(ok.headers['x-request-id']).toBe('abc.DEF_1-2');
    const bad = await t.inject({ method: 'GET', url: '/health/', headers: { 'x-request-id': 'bad id<script>' } });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const long = await t.inject({ method: 'GET', url: '/health/', headers: { 'x-request-id': 'a'.repeat(129) } });
    expect(long.headers['x-request-id']).not.toBe('a'.repeat(129));
    const none = await t.inject({ method: 'GET', url: '/api/v1/nope/' });
    expect(none.headers['x-request-id']).toBe(json(none).request_id);
  });

  it('sends helmet security headers and no X-Powered-By', async () => {
    const res = await t.inject({ method: 'GET', url: '/health/' });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['x-frame-options']).toBeDefined();
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('sends no CORS headers unless origins are configured', async () => {
    const res = await t.inject({ method: 'GET', url: '/health/', headers: { origin: 'https://evil.example' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses a null character in a query parameter with 400 invalid_query, naming it', async () => {
    const res = await t.as(org.owner, { method: 'GET', url: '/api/v1/incidents/?search=a%00b' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(json(res)).toMatchObject({ code: 'invalid_query', errors: [{ field: 'search', message: 'null characters are not allowed' }] });
    const repeated = await t.as(org.owner, { method: 'GET', url: '/api/v1/incidents/?search=a&search=b%00' });
    expect(repeated.statusCode).toBe(400);
    expect(json(repeated).errors).toEqual([{ field: 'search.1', message: 'null characters are not allowed' }]);
  });

  it('refuses a null character anywhere in a JSON body (value or key, at any depth) with 400, storing nothing', async () => {
    const list = async () => json(await t.as(org.owner, { method: 'GET', url: '/api/v1/incidents/' })).count as number;
    const before = await list();
    const title = await t.as(org.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'a\u0000b', severity: 'low' } });
    expect(title.statusCode).toBe(400);
    expect(json(title)).toMatchObject({ code: 'validation_error', errors: [{ field: 'title', message: 'null characters are not allowed' }] });
    const nested = await t.as(org.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'fine', severity: 'low', tags: ['ok', 'b\u0000'] } });
    expect(nested.statusCode).toBe(400);
    expect(json(nested).errors).toEqual([{ field: 'tags.1', message: 'null characters are not allowed' }]);
    const key = await t.inject({ method: 'POST', url: '/echo/', payload: { name: 'x', 'n\u0000': 1 } });
    expect(key.statusCode).toBe(400);
    expect(json(key).errors).toEqual([{ field: 'n\u0000', message: 'null characters are not allowed' }]);
    expect(await list()).toBe(before);
    // The same text without the character is fine.
    expect((await t.inject({ method: 'POST', url: '/echo/', payload: { name: 'a b' } })).statusCode).toBe(200);
  });

  it('answers 400, not 500, for a deeply nested JSON body, with or without a token', async () => {
    const deep = `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const withNul = `{"name":"x","n":1,"deep":${'['.repeat(5000)}"\\u0000"${']'.repeat(5000)}}`;
    const token = await t.token(org.owner);
    for (const [url, authorization] of [
      ['/api/v1/auth/token/', undefined],
      ['/api/v1/auth/token/verify/', undefined],
      ['/api/v1/auth/token/refresh/', undefined],
      ['/api/v1/incidents/', `Bearer ${token}`],
    ] as const) {
      for (const payload of [deep, withNul]) {
        const res = await t.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, payload });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
        expect(res.headers['content-type']).toContain('application/problem+json');
      }
    }
    // The NUL check names the deepest place of a value as it did.
    const res = await t.inject({ method: 'POST', url: '/echo/', headers: { 'content-type': 'application/json' }, payload: withNul });
    expect(json(res).errors, res.body.slice(0, 300)).toEqual([{ field: `deep${'.0'.repeat(5000)}`, message: expect.stringContaining('null character') }]);
  });

  it('answers 400 malformed_json for a JSON body that is not valid UTF-8, instead of storing U+FFFD', async () => {
    const before = await t.as(org.owner, { method: 'GET', url: '/api/v1/incidents/' });
    const payload = Buffer.concat([Buffer.from('{"title": "caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const res = await t.as(org.owner, { method: 'POST', url: '/api/v1/incidents/', headers: { 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(400);
    expect(json(res)).toMatchObject({ code: 'malformed_json', detail: expect.stringContaining('UTF-8') });
    const after = await t.as(org.owner, { method: 'GET', url: '/api/v1/incidents/' });
    expect(json(after).count).toBe(json(before).count);
    // Valid UTF-8 beyond ASCII is taken as it is.
    const ok = await t.as(org.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'café ☕ 𝄞' } });
    expect(ok.statusCode).toBe(201);
    expect(json(ok).title).toBe('café ☕ 𝄞');
  });

  it('answers 404 invalid_page, not 500, for a page number past anything a list can hold', async () => {
    for (const page of ['99999999999999999999', '9223372036854775807', '1e308', '1000000001']) {
      for (const url of ['/api/v1/incidents/', '/api/v1/users/', '/api/v1/audit-log/', '/api/v1/leaks/sources/', '/api/v1/incidents/iocs/']) {
        const res = await t.as(org.owner, { method: 'GET', url: `${url}?page=${page}` });
        expect(res.statusCode, `${url}?page=${page}: ${res.body}`).toBe(404);
        expect(json(res).code).toBe('invalid_page');
      }
    }
    const search = await t.as(org.owner, { method: 'GET', url: '/api/v1/leaks/search/?email=a@b.example&page=99999999999999999999' });
    expect(search.statusCode).toBe(404);
    const huge = await t.as(org.owner, { method: 'GET', url: '/api/v1/incidents/?page_size=99999999999999999999' });
    expect(huge.statusCode).toBe(200);
  });

  it('answers 404 problem+json for a path that is not valid percent-encoding or has an over-long parameter', async () => {
    for (const url of ['/api/v1/incidents/%zz/', `/api/v1/incidents/${'a'.repeat(600)}/`]) {
      const res = await t.as(org.owner, { method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(json(res)).toMatchObject({ status: 404, code: 'not_found' });
      expect(res.headers['x-request-id']).toBe(json(res).request_id);
    }
  });

  it('answers 404 for a path id that is not a UUID', async () => {
    const res = await t.as(org.owner, { method: 'GET', url: '/api/v1/users/not-a-uuid/' });
    expect(res.statusCode).toBe(404);
    expect(json(res).code).toBe('not_found');
  });
});

describe('CORS when configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_CORS_ORIGINS: 'https://app.example.com' });
  });
  afterAll(() => t.close());

  it('allows the listed origin only', async () => {
    const ok = await t.inject({ method: 'GET', url: '/health/', headers: { origin: 'https://app.example.com' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const other = await t.inject({ method: 'GET', url: '/health/', headers: { origin: 'https://evil.example' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});
