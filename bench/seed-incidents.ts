/**
 * Seeds N incidents (default 100,000) into one organization of a threatmon database, for the
 * incident benchmarks. Statuses and severities uniform; created_at spread over the past year.
 *
 *   THREATMON_DATABASE_URL=sqlite:/tmp/b.db tsx bench/seed-incidents.ts [N] [ORG_NAME]
 */
import { pathToFileURL } from 'node:url';
import { v7 as uuidv7 } from 'uuid';
import { createServices } from '../src/app.js';
import { bootstrapFirstAdmin } from '../src/bootstrap.js';
import { loadConfig } from '../src/config.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createDeps } from '../src/deps.js';
import { SEVERITIES, SEVERITY_RANK, STATUSES } from '../src/modules/incidents/incidents.schemas.js';
import { seededRandom } from '../src/cli/seeded-random.js';

export async function seedIncidents(n: number, orgName = 'Default'): Promise<void> {
  const deps = createDeps(loadConfig(process.env));
  try {
    await migrateToLatest(deps.database.db);
    await bootstrapFirstAdmin(deps, createServices(deps));
    const org = await deps.database.db.selectFrom('organizations').select('id').where('name', '=', orgName).executeTakeFirstOrThrow();
    const admin = await deps.database.db.selectFrom('users').select('id').where('organization_id', '=', org.id).executeTakeFirstOrThrow();
    const now = Date.now();
    // Deterministic, so two runs seed the same data.
    const random = seededRandom(42);
    const started = Date.now();
    for (let done = 0; done < n; ) {
      const batch = Math.min(2000, n - done);
      const rows = Array.from({ length: batch }, (_, i) => {
        const severity = SEVERITIES[Math.floor(random() * 4)]!;
        const status = STATUSES[Math.floor(random() * 5)]!;
        const created = new Date(now - Math.floor(random() * 365 * 86400_000)).toISOString();
        return {
          id: uuidv7(),
          organization_id: org.id,
          title: `Incident ${done + i}: suspicious activity on host-${Math.floor(random() * 5000)}`,
          description: 'Seeded for benchmarks.',
          status,
          severity,
          severity_rank: SEVERITY_RANK[severity],
          tlp: 'amber',
          tags: '["bench"]',
          assignee_id: null,
          source_alert_id: null,
          created_by: admin.id,
          created_at: created,
          updated_at: created,
          resolved_at: status === 'resolved' || status === 'closed' ? created : null,
          closed_at: status === 'closed' ? created : null,
        };
      });
      await deps.database.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += 100) await trx.insertInto('incidents').values(rows.slice(i, i + 100)).execute();
      });
      done += batch;
      if (done % 20000 === 0 || done === n) process.stderr.write(`seeded ${done}/${n} incidents\n`);
    }
    // The counters the API keeps on every change: rebuilt once for the rows inserted directly.
    const { sql } = await import('kysely');
    await deps.database.db.deleteFrom('incident_counters').where('organization_id', '=', org.id).execute();
    await sql`insert into incident_counters (organization_id, status, severity, n)
      select organization_id, status, severity, count(*) from incidents where organization_id = ${org.id} group by organization_id, status, severity`.execute(deps.database.db);
    process.stderr.write(` in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    if (deps.database.dialect === 'postgres') {
      await sql`analyze incidents`.execute(deps.database.db);
    }
  } finally {
    await deps.database.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await seedIncidents(Number(process.argv[2] ?? 100_000), process.argv[3] ?? 'Default');
}
