import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { createServices } from '../app.js';
import type { Plan } from '../config.js';
import type { DB } from '../db/schema.js';
import type { Principal } from '../modules/identity/index.js';
import type { IngestItem } from '../modules/leaks/index.js';
import { pickWith, seededRandom } from './seeded-random.js';
import type { Role } from '../modules/identity/index.js';

type Services = ReturnType<typeof createServices>;

export const DEMO_ORG = 'Demo';
export const DEMO_SOURCE = 'Demo breach (generated)';

export interface DemoReport {
  organization: string;
  users: Array<{ username: string; role: Role; password: string }>;
  incidents: number;
  iocs: number;
  source: string;
  records: number;
}

/** The same demo every time. */
function generator(seed: number) {
  const next = seededRandom(seed);
  return { next, pick: pickWith(next) };
}

const FIRST = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'mallory', 'niaj', 'olivia', 'peggy', 'rupert', 'sybil', 'trent', 'victor', 'walter'];
const LAST = ['smith', 'jones', 'garcia', 'miller', 'davis', 'lopez', 'wilson', 'moore', 'taylor', 'thomas', 'white', 'harris', 'martin'];
/** The demo company's domain (example.com is reserved for documentation) and others beside it. */
export const DEMO_DOMAIN = 'demo-corp.example';
const DOMAINS = [DEMO_DOMAIN, 'mail.demo-corp.example', 'gmail.example', 'outlook.example', 'partner.example', 'shop.example'];
const PASSWORDS = ['Summer2024!', 'password123', 'letmein', 'dragon', 'qwerty2023', 'Winter#22', 'iloveyou', 'monkey99'];

/** Leak records of the demo breach: e-mails at a handful of domains, some with passwords, IPs and extras. */
export function* demoRecords(count: number): Generator<IngestItem> {
  const g = generator(20261125);
  for (let i = 0; i < count; i++) {
    const first = g.pick(FIRST);
    const last = g.pick(LAST);
    const domain = g.pick(DOMAINS);
    const record: Record<string, unknown> = {
      email: `${first}.${last}${i}@${domain}`,
      username: `${first}${last[0]}${i}`,
      full_name: `${first[0]?.toUpperCase()}${first.slice(1)} ${last[0]?.toUpperCase()}${last.slice(1)}`,
      leaked_at: new Date(Date.UTC(2024, Math.floor(g.next() * 12), 1 + Math.floor(g.next() * 28))).toISOString(),
    };
    if (g.next() < 0.6) record.password = `${g.pick(PASSWORDS)}${i % 7 === 0 ? '' : i}`;
    if (g.next() < 0.3) record.ip = `203.0.113.${Math.floor(g.next() * 254) + 1}`;
    if (g.next() < 0.2) record.extra = { department: g.pick(['sales', 'it', 'finance', 'hr']), vpn_user: g.next() < 0.5 };
    yield { index: i, value: record };
  }
}

const INCIDENTS = [
  {
    title: 'Phishing wave against finance',
    severity: 'high',
    tags: ['phishing', 'finance'],
    iocs: [
      { type: 'domain', value: 'demo-corp-login[.]example' },
      { type: 'url', value: 'hxxps://demo-corp-login[.]example/sso' },
      { type: 'email', value: 'it-support@demo-corp-login.example' },
    ],
  },
  {
    title: 'Credential stuffing on the VPN portal',
    severity: 'critical',
    tags: ['credentials', 'vpn'],
    iocs: [
      { type: 'ipv4', value: '198.51.100[.]23' },
      { type: 'cidr', value: '198.51.100.0/24' },
    ],
  },
  {
    title: 'Malware on a sales laptop',
    severity: 'medium',
    tags: ['malware'],
    iocs: [
      { type: 'sha256', value: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
      { type: 'filename', value: 'invoice_2024.pdf.exe' },
      { type: 'cve', value: 'CVE-2024-3400' },
    ],
  },
] as const;

/**
 * `threatmon seed-demo`: the organization "Demo" with one user per role, two monitors, incidents with IOCs, and a
 * leak source of `records` generated records (staff operate the corpus; the demo owner is not staff).
 * Refuses when "Demo" exists already, so it never doubles anything.
 */
export async function seedDemo(s: Services, db: Kysely<DB>, opts: { records: number; onProgress?: (done: number) => void }): Promise<DemoReport> {
  const password = () => randomBytes(12).toString('base64url');
  const users: DemoReport['users'] = [];
  const ownerPassword = password();
  const { org, owner } = await s.orgs.create({
    name: DEMO_ORG,
    plan: 'professional',
    owner: { username: 'demo-owner', email: `owner@${DEMO_DOMAIN}`, password: ownerPassword, role: 'owner' },
  });
  users.push({ username: owner.username, role: 'owner', password: ownerPassword });
  for (const role of ['admin', 'analyst', 'viewer'] as const) {
    const pw = password();
    const user = await db.transaction().execute((trx) => s.users.insertUser(trx, org.id, { username: `demo-${role}`, email: `${role}@${DEMO_DOMAIN}`, password: pw, role }));
    users.push({ username: user.username, role, password: pw });
  }
  const p: Principal = Object.freeze({
    user: owner,
    organization: { id: org.id, name: org.name, plan: org.plan as Plan },
    role: 'owner',
    isStaff: false,
    endedSessions: new Set<string>(),
  });
  await s.monitoring.create({ p, ip: '127.0.0.1' }, { name: 'Our domains', type: 'domain', terms: [DEMO_DOMAIN], severity: 'high' });
  await s.monitoring.create({ p, ip: '127.0.0.1' }, { name: 'Code names', type: 'keyword', terms: ['project falcon', 'finance'] });
  let iocs = 0;
  for (const incident of INCIDENTS) {
    const created = await s.incidents.create({ p, ip: '127.0.0.1' }, { ...incident, tags: [...incident.tags], iocs: incident.iocs.map((i) => ({ ...i })) });
    iocs += created.ioc_count;
  }
  const source =
    (await s.leaks.findSourceByName(DEMO_SOURCE)) ??
    (await s.leaks.createSource({ p: null, ip: null }, { name: DEMO_SOURCE, description: 'Generated by threatmon seed-demo.', breach_date: '2024-12-01', data_classes: ['email', 'username', 'password', 'ip', 'name', 'other'] }));
  const report = await s.leaks.ingest(source.id, demoRecords(opts.records), { p: null, ip: null }, { onBatch: (_r, processed) => opts.onProgress?.(processed) });
  return { organization: org.name, users, incidents: INCIDENTS.length, iocs, source: source.name, records: report.accepted + report.duplicates };
}
