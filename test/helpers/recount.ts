import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';

/**
 * Every counter the service keeps beside its rows, next to a recount from the rows themselves:
 * equal pairs mean no change was half-applied. Keys name what differs when they do not.
 */
export async function countersAndRecounts(db: Kysely<DB>): Promise<{ kept: Record<string, number>; recounted: Record<string, number> }> {
  const kept: Record<string, number> = {};
  const recounted: Record<string, number> = {};
  const n = (v: unknown) => Number(v ?? 0);

  const total = await db.selectFrom('leak_records').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  const withPassword = await db.selectFrom('leak_records').select((eb) => eb.fn.countAll().as('n')).where('password_sha1', 'is not', null).executeTakeFirstOrThrow();
  const counters = new Map((await db.selectFrom('leak_counters').selectAll().execute()).map((c) => [c.key, n(c.n)]));
  kept['leaks.total'] = counters.get('total') ?? 0;
  recounted['leaks.total'] = n(total.n);
  kept['leaks.with_password'] = counters.get('with_password') ?? 0;
  kept['leaks.class:password'] = counters.get('class:password') ?? 0;
  recounted['leaks.with_password'] = n(withPassword.n);
  recounted['leaks.class:password'] = n(withPassword.n);

  for (const s of await db.selectFrom('leak_sources').select(['id', 'record_count']).execute()) kept[`source ${s.id}`] = n(s.record_count);
  for (const r of await db.selectFrom('leak_records').select(['source_id', (eb) => eb.fn.countAll().as('n')]).groupBy('source_id').execute()) {
    recounted[`source ${r.source_id}`] = n(r.n);
  }
  for (const s of Object.keys(kept)) if (s.startsWith('source ') && !(s in recounted)) recounted[s] = 0;

  for (const d of await db.selectFrom('leak_domain_counts').selectAll().where('n', '!=', 0).execute()) kept[`domain ${d.key}`] = n(d.n);
  for (const r of await db.selectFrom('leak_records').select(['domain_rev', (eb) => eb.fn.countAll().as('n')]).where('domain_rev', 'is not', null).groupBy('domain_rev').execute()) {
    recounted[`domain ${r.domain_rev}`] = n(r.n);
  }

  for (const i of await db.selectFrom('incidents').select(['id', 'ioc_count']).execute()) {
    kept[`incident ${i.id} ioc_count`] = n(i.ioc_count);
    recounted[`incident ${i.id} ioc_count`] = 0;
  }
  for (const r of await db.selectFrom('iocs').select(['incident_id', (eb) => eb.fn.countAll().as('n')]).groupBy('incident_id').execute()) {
    recounted[`incident ${r.incident_id} ioc_count`] = n(r.n);
  }
  for (const c of await db.selectFrom('incident_counters').selectAll().where('n', '!=', 0).execute()) kept[`incidents ${c.organization_id} ${c.status} ${c.severity}`] = n(c.n);
  for (const r of await db
    .selectFrom('incidents')
    .select(['organization_id', 'status', 'severity', (eb) => eb.fn.countAll().as('n')])
    .groupBy(['organization_id', 'status', 'severity'])
    .execute()) {
    recounted[`incidents ${r.organization_id} ${r.status} ${r.severity}`] = n(r.n);
  }
  for (const c of await db
    .selectFrom('monitor_alert_counts')
    .select(['organization_id', 'monitor_id', 'status', 'severity', (eb) => eb.fn.sum('n').as('n')])
    .groupBy(['organization_id', 'monitor_id', 'status', 'severity'])
    .execute()) {
    if (n(c.n) !== 0) kept[`alerts ${c.organization_id} ${c.monitor_id} ${c.status} ${c.severity}`] = n(c.n);
  }
  for (const r of await db
    .selectFrom('monitor_alerts')
    .select(['organization_id', 'monitor_id', 'status', 'severity', (eb) => eb.fn.countAll().as('n')])
    .groupBy(['organization_id', 'monitor_id', 'status', 'severity'])
    .execute()) {
    recounted[`alerts ${r.organization_id} ${r.monitor_id} ${r.status} ${r.severity}`] = n(r.n);
  }
  return { kept, recounted };
}
