import { describe, expect, it } from 'vitest';
import { normaliseRecord } from '../../src/domain/leak-record.js';
import type { InsertedRecord } from '../../src/modules/hooks.js';
import { type ActiveMonitor, MonitorIndex } from '../../src/modules/monitoring/monitoring.matcher.js';

const record = (value: object, id = 'r1'): InsertedRecord => {
  const r = normaliseRecord(value);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return { ...r.record, id, source_id: 's1' };
};
const monitor = (type: string, terms: string[], id = `${type}-monitor`): ActiveMonitor => ({ id, organization_id: 'o1', type, terms, severity: 'high' });
const found = (monitors: ActiveMonitor[], r: InsertedRecord) => new MonitorIndex(monitors).match([r]).map((m) => [m.monitor.id, m.term, m.field]);

describe('the monitor index', () => {
  it('matches a domain term on the record domain or the e-mail domain, subdomains included, and nothing beside', () => {
    const m = [monitor('domain', ['example.com'])];
    expect(found(m, record({ email: 'a@example.com' }))).toEqual([['domain-monitor', 'example.com', 'domain']]);
    expect(found(m, record({ email: 'a@mail.corp.example.com' }))).toEqual([['domain-monitor', 'example.com', 'domain']]);
    expect(found(m, record({ email: 'a@other.example', domain: 'sub.example.com' }))).toEqual([['domain-monitor', 'example.com', 'domain']]);
    expect(found(m, record({ email: 'a@example.com', domain: 'elsewhere.example' }))).toEqual([['domain-monitor', 'example.com', 'email']]);
    expect(found(m, record({ email: 'a@notexample.com' }))).toEqual([]);
    expect(found(m, record({ email: 'a@example.com.evil.example' }))).toEqual([]);
  });

  it('matches e-mails exactly and usernames ignoring case', () => {
    expect(found([monitor('email', ['ceo@example.com'])], record({ email: 'CEO@Example.com' }))).toEqual([['email-monitor', 'ceo@example.com', 'email']]);
    expect(found([monitor('email', ['ceo@example.com'])], record({ email: 'ceo2@example.com' }))).toEqual([]);
    expect(found([monitor('username', ['jdoe'])], record({ username: 'JDoe' }))).toEqual([['username-monitor', 'jdoe', 'username']]);
  });

  it('matches an address inside a CIDR range or equal to an address, IPv4 (mapped too) and IPv6', () => {
    const m = [monitor('ip', ['203.0.113.0/24', '198.51.100.7', '2001:db8::/32', '0.0.0.0/0'], 'ranges')];
    expect(found([monitor('ip', ['203.0.113.0/24'])], record({ ip: '203.0.113.250' }))).toEqual([['ip-monitor', '203.0.113.0/24', 'ip']]);
    expect(found([monitor('ip', ['203.0.113.0/24'])], record({ ip: '203.0.114.1' }))).toEqual([]);
    expect(found([monitor('ip', ['198.51.100.7'])], record({ ip: '::ffff:198.51.100.7' }))).toEqual([['ip-monitor', '198.51.100.7', 'ip']]);
    expect(found([monitor('ip', ['2001:db8::/32'])], record({ ip: '2001:db8:ffff::1' }))).toEqual([['ip-monitor', '2001:db8::/32', 'ip']]);
    expect(found(m, record({ ip: '203.0.113.9' })).map(([, term]) => term).sort()).toEqual(['0.0.0.0/0', '203.0.113.0/24']);
  });

  it('finds a keyword in any text field, extra values included, naming the field, once a record', () => {
    const m = [monitor('keyword', ['falcon'])];
    expect(found(m, record({ email: 'a@b.example', extra: { project: 'Project FALCON' } }))).toEqual([['keyword-monitor', 'falcon', 'extra.project']]);
    expect(found(m, record({ email: 'falcon@b.example', full_name: 'Falcon Falconer' }))).toEqual([['keyword-monitor', 'falcon', 'email']]);
    expect(found(m, record({ email: 'a@b.example', full_name: 'Hawk' }))).toEqual([]);
  });

  it('serves every organization from one index: each monitor holding a term gets its own match', () => {
    const a = { ...monitor('domain', ['example.com'], 'a'), organization_id: 'o1' };
    const b = { ...monitor('domain', ['mail.example.com'], 'b'), organization_id: 'o2' };
    expect(found([a, b], record({ email: 'x@mail.example.com' })).sort()).toEqual([
      ['a', 'example.com', 'domain'],
      ['b', 'mail.example.com', 'domain'],
    ]);
  });
});
