import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

/** A leak source says what it is: its kind and the flags breach catalogues use. */
describe('leak source kinds and flags', () => {
  let t: TestApp;
  let staff: User;
  let analyst: User;
  const create = (body: object) => t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: body });

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'kinds-platform', true)).owner;
    analyst = await t.createUser(await t.createOrg('enterprise', 'kinds-customer'), 'analyst');
  });
  afterAll(() => t.close());

  it('defaults to a breach with no flag, and takes kind and flags on create and PATCH', async () => {
    const plain = json(await create({ name: 'Plain breach' }));
    expect(plain).toMatchObject({ kind: 'breach', is_verified: false, is_fabricated: false, is_sensitive: false, is_spam_list: false });
    const combo = await create({ name: 'Combo 2026', kind: 'combolist', is_spam_list: true, is_fabricated: true });
    expect(combo.statusCode).toBe(201);
    expect(json(combo)).toMatchObject({ kind: 'combolist', is_spam_list: true, is_fabricated: true, is_sensitive: false });
    const patched = await t.as(staff, { method: 'PATCH', url: `/api/v1/leaks/sources/${plain.id}/`, payload: { kind: 'stealer_log', is_sensitive: true } });
    expect(json(patched)).toMatchObject({ kind: 'stealer_log', is_sensitive: true });
    expect(json(await t.as(analyst, { method: 'GET', url: `/api/v1/leaks/sources/${plain.id}/` }))).toMatchObject({ kind: 'stealer_log', is_sensitive: true });
    const audit = await t.db.selectFrom('audit_log').select('changes').where('action', '=', 'leak_source.updated').where('target_id', '=', plain.id).execute();
    expect(JSON.parse(audit[0]?.changes ?? '{}')).toEqual({ kind: { from: 'breach', to: 'stealer_log' }, is_sensitive: { from: false, to: true } });
  });

  it('refuses a kind it does not know, changing nothing', async () => {
    const res = await create({ name: 'Odd', kind: 'rumour' });
    expect(res.statusCode).toBe(400);
    expect(json(res).errors).toEqual([expect.objectContaining({ field: 'kind' })]);
    expect(json(await t.as(staff, { method: 'GET', url: '/api/v1/leaks/sources/?search=Odd' })).count).toBe(0);
  });

  it('filters the list by kind and by each flag', async () => {
    const names = async (qs: string) => json(await t.as(analyst, { method: 'GET', url: `/api/v1/leaks/sources/?${qs}` })).results.map((s: { name: string }) => s.name).sort();
    expect(await names('kind=combolist')).toEqual(['Combo 2026']);
    expect(await names('kind=combolist,stealer_log')).toEqual(['Combo 2026', 'Plain breach']);
    expect(await names('is_spam_list=true')).toEqual(['Combo 2026']);
    expect(await names('is_sensitive=true')).toEqual(['Plain breach']);
    expect(await names('is_fabricated=false')).toEqual(['Plain breach']);
    expect((await t.as(analyst, { method: 'GET', url: '/api/v1/leaks/sources/?kind=rumour' })).statusCode).toBe(400);
  });

  it('keeps the breached site\'s domain, normalised, and refuses one that is none', async () => {
    const res = await create({ name: 'Site breach', domain: 'Shop.Example.' });
    expect(json(res)).toMatchObject({ domain: 'shop.example' });
    expect(json(await create({ name: 'No site' })).domain).toBeNull();
    const bad = await create({ name: 'Bad site', domain: 'not a domain' });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).errors).toEqual([expect.objectContaining({ field: 'domain' })]);
    const patched = await t.as(staff, { method: 'PATCH', url: `/api/v1/leaks/sources/${json(res).id}/`, payload: { domain: 'shop2.example' } });
    expect(json(patched).domain).toBe('shop2.example');
    expect(json(await t.as(staff, { method: 'PATCH', url: `/api/v1/leaks/sources/${json(res).id}/`, payload: { domain: null } })).domain).toBeNull();
  });
});
