/**
 * Seeds `count` active monitors over 100 organizations, a mix of the five types, with terms drawn
 * partly from the bench corpus (so that about 1% of its records match) and partly made up (so
 * that most terms, as in real use, match nothing). Deterministic. Used by import-leaks.mjs
 * --monitors N, before the import it measures.
 */
import path from 'node:path';
import { seededRandom } from '../dist/cli/seeded-random.js';
import { corpusFiles, corpusHead } from './corpus-files.mjs';

export async function seedMonitors(deps, services, dataDir, count) {
  const rnd = seededRandom(28);
  const int = (n) => Math.floor(rnd() * n);
  const sample = corpusHead(path.join(dataDir, corpusFiles(dataDir)[3]), 1 << 22)
    .split('\n')
    .filter(Boolean)
    .slice(0, 20_000)
    .map((l) => JSON.parse(l));
  const emails = sample.map((r) => r.email.toLowerCase());
  const usernames = sample.filter((r) => r.username).map((r) => r.username.toLowerCase());
  const orgs = [];
  for (let i = 0; i < 100; i++) {
    const { org, owner } = await services.orgs.create({
      name: `bench-monitors-${i}`,
      plan: 'enterprise',
      owner: { username: `bench-monitors-${i}-owner`, email: `owner@bench-monitors-${i}.example`, password: 'bench monitors password 1', role: 'owner' },
    });
    orgs.push({ id: org.id, owner: owner.id });
  }
  // Per type: its share of monitors, and how to draw one term (real: from the corpus).
  const mix = [
    ['email', 0.4, () => (rnd() < 0.12 ? emails[int(emails.length)] : `nobody${int(1e9)}@unseen${int(1e4)}.example`)],
    ['username', 0.15, () => (rnd() < 0.2 ? usernames[int(usernames.length)] : `ghost${int(1e9)}`)],
    ['domain', 0.2, () => (rnd() < 0.5 ? `corp${3000 + int(2000)}.example` : `company${int(1e6)}.example`)],
    ['ip', 0.1, () => (rnd() < 0.3 ? `${1 + int(223)}.${int(256)}.0.0/16` : `${1 + int(223)}.${int(256)}.${int(256)}.0/24`)],
    ['keyword', 0.15, () => (rnd() < 0.002 ? ['jennifer smith', 'olga lopez', 'yuki harris'][int(3)] : `codename-${int(1e9).toString(36)}`)],
  ];
  const at = new Date().toISOString();
  const rows = [];
  for (let i = 0; i < count; i++) {
    let r = rnd();
    const [type, , draw] = mix.find(([, share]) => (r -= share) < 0) ?? mix[0];
    const terms = [...new Set(Array.from({ length: 1 + int(3) }, draw))];
    const org = orgs[i % orgs.length];
    rows.push({
      id: deps.newId(),
      organization_id: org.id,
      name: `${type} monitor ${i}`,
      description: '',
      type,
      terms: JSON.stringify(terms),
      status: 'active',
      severity: ['low', 'medium', 'high', 'critical'][int(4)],
      created_by: org.owner,
      created_at: at,
      updated_at: at,
      last_scan_at: null,
    });
  }
  const db = deps.database.db;
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('monitors').values(rows.slice(i, i + 500)).execute();
  await db.updateTable('monitor_generation').set((eb) => ({ n: eb('n', '+', 1) })).execute();
  return { monitors: rows.length, terms: rows.reduce((n, r) => n + JSON.parse(r.terms).length, 0) };
}
