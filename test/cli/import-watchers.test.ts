import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, TEST_PG_URL, testDatabaseUrl } from '../helpers/build-app.js';

/**
 * `import-leaks`, plain and --bulk, feeds the same ingest seam as the API: monitors raise their
 * alerts and tracking tokens their leak exposures for the records it stores.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-watchers-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('import-leaks and the watchers', () => {
  it('raises alerts and records token exposures for records imported plain and with --bulk', async () => {
    const url = TEST_PG_URL ? await testDatabaseUrl() : `sqlite:${path.join(dir, 'watch.db')}`;
    const t = await buildTestApp({ THREATMON_DATABASE_URL: url });
    const org = await t.createOrg('enterprise', 'importers');
    const monitor = json(await t.as(org.owner, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Imported', type: 'domain', terms: ['imported.example'], backfill: false } }));
    const cred = json(await t.as(org.owner, { method: 'POST', url: '/api/v1/tracking-tokens/', payload: { name: 'Imported login', kind: 'credential', username: 'imported.canary' } }));
    await t.close();

    const runs = TEST_PG_URL ? [['plain', []]] : [['plain', []], ['bulk', ['--bulk']]];
    for (const [name, flags] of runs as Array<[string, string[]]>) {
      const file = path.join(dir, `${name}.ndjson`);
      const lines = [
        { email: `one-${name}@imported.example` },
        { email: `two-${name}@mail.imported.example` },
        { email: `three-${name}@other.example`, username: 'Imported.Canary' },
        { email: `four-${name}@other.example` },
      ];
      fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'import-leaks', file, '--source', `Import ${name}`, '--create-source', '--no-progress', ...flags], {
        cwd: ROOT,
        env: { ...process.env, THREATMON_DATABASE_URL: url, THREATMON_LOG_LEVEL: 'warn' },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain('4 accepted');
    }

    const again = await buildTestApp({ THREATMON_DATABASE_URL: url });
    try {
      const alerts = await again.db.selectFrom('monitor_alerts').select('matched_field').where('monitor_id', '=', monitor.id).execute();
      expect(alerts).toHaveLength(2 * runs.length);
      // The import folded the count rows its alerts appended: one per (status, severity), holding them all.
      expect(await again.db.selectFrom('monitor_alert_counts').select(['status', 'n']).where('monitor_id', '=', monitor.id).execute()).toEqual([{ status: 'new', n: 2 * runs.length }]);
      const exposures = await again.db.selectFrom('tracking_token_exposures').select(['channel', 'leak_source_name']).where('token_id', '=', cred.id).orderBy('leak_source_name').execute();
      expect(exposures).toEqual(runs.map(([name]) => ({ channel: 'leak', leak_source_name: `Import ${name}` })).sort((a, b) => a.leak_source_name.localeCompare(b.leak_source_name)));
      const events = await again.db.selectFrom('events').select('type').execute();
      expect(events.filter((e) => e.type === 'alert.created')).toHaveLength(2 * runs.length);
      expect(events.filter((e) => e.type === 'tracking_token.exposed')).toHaveLength(runs.length);
    } finally {
      await again.close();
    }
  });
});
