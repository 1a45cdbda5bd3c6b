import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, TEST_PG_URL, type TestApp, type TestOrg, testDatabaseUrl } from '../helpers/build-app.js';
import { Receiver } from '../helpers/receiver.js';

const PUBLIC = 'https://threatmon.example';

/** A real SMTP server on loopback: every message parsed as it arrives (and whether it came over TLS). */
async function smtpServer(options: { starttls?: boolean } = {}) {
  const mails: ParsedMail[] = [];
  const secure: boolean[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // smtp-server offers STARTTLS with its own self-signed certificate.
    disabledCommands: options.starttls ? [] : ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      secure.push(session.secure);
      simpleParser(stream).then(
        (mail) => {
          mails.push(mail);
          callback();
        },
        (err: Error) => callback(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { mails, secure, port: (server.server.address() as AddressInfo).port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('notification channels (API.md section 7a)', () => {
  let t: TestApp;
  let other: TestOrg;
  let staff: User;
  let smtp: Awaited<ReturnType<typeof smtpServer>>;
  const receiver = new Receiver();
  let base: string;
  let source: string;
  const m = {} as Record<Role, User>;
  let n = 0;

  const create = (body: object, as: User = m.admin) => t.as(as, { method: 'POST', url: '/api/v1/notifications/channels/', payload: { events: ['alert.created'], ...body } });
  const channel = async (body: object) => {
    const res = await create({ name: `channel ${++n}`, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return json(res) as { id: string; target: string };
  };
  const monitor = async (domain: string) => json(await t.as(m.analyst, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: `Watch ${domain}`, type: 'domain', terms: [domain] } })) as { id: string };
  const ingest = async (records: object[]) => {
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: records });
    expect(res.statusCode, res.body).toBe(200);
    return json(res) as { alerts_raised: number };
  };
  const deliver = () => t.services.notifications.sender.deliverDue();
  const bodiesAt = (p: string) => receiver.received.filter((r) => r.path === p).map((r) => JSON.parse(r.body) as Record<string, any>);
  const remove = (id: string) => t.as(m.admin, { method: 'DELETE', url: `/api/v1/notifications/channels/${id}/` });

  beforeAll(async () => {
    smtp = await smtpServer();
    base = await receiver.start();
    t = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true', THREATMON_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, THREATMON_SMTP_FROM: 'threatmon <alerts@threatmon.example>', THREATMON_PUBLIC_URL: PUBLIC, THREATMON_METRICS: 'true' });
    const team = await t.createTeam('enterprise', 'notified', 'notify');
    Object.assign(m, team.members);
    other = await t.createOrg('enterprise', 'not-notified');
    staff = (await t.createOrg('enterprise', 'notify-platform', true)).owner;
    source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Notify dump' } })).id;
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    await smtp.close();
  });

  it('admins write channels, analysts read them with the target masked; other organizations see none', async () => {
    const res = await create({ kind: 'slack', name: 'SOC', target: `${base}/services/T000/B000/secretpart` });
    expect(res.statusCode).toBe(201);
    const made = json(res);
    expect(made).toMatchObject({ kind: 'slack', target: `${base}/services/T000/B000/secretpart`, events: ['alert.created'], personal_data: false, per_minute: 10, is_active: true, status: 'healthy', consecutive_failures: 0 });
    const read = json(await t.as(m.analyst, { method: 'GET', url: `/api/v1/notifications/channels/${made.id}/` }));
    expect(read.target).toBe(`${new URL(base).protocol}//${new URL(base).host}/…part`);
    expect(JSON.stringify(json(await t.as(m.analyst, { method: 'GET', url: '/api/v1/notifications/channels/' })))).not.toContain('secretpart');
    expect((await create({ kind: 'slack', name: 'x', target: `${base}/x` }, m.analyst)).statusCode).toBe(403);
    expect((await t.as(m.viewer, { method: 'GET', url: '/api/v1/notifications/channels/' })).statusCode).toBe(403);
    expect((await t.as(other.owner, { method: 'GET', url: `/api/v1/notifications/channels/${made.id}/` })).statusCode).toBe(404);
    expect((await t.as(other.owner, { method: 'PATCH', url: `/api/v1/notifications/channels/${made.id}/`, payload: { name: 'mine' } })).statusCode).toBe(404);
    const audit = await t.db.selectFrom('audit_log').select(['changes']).where('action', '=', 'notification_channel.created').where('target_id', '=', made.id).executeTakeFirstOrThrow();
    expect(audit.changes).not.toContain('secretpart');
    for (const [body, field] of [
      [{ kind: 'email', target: 'not-an-address' }, 'target'],
      [{ kind: 'discord', target: 'ftp://example.com/x' }, 'target'],
      [{ kind: 'teams', target: `${base}/x`, events: ['nope'] }, 'events.0'],
    ] as const) {
      const bad = await create({ name: 'bad', ...body });
      expect(bad.statusCode, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(json(bad).errors)).toContain(field);
    }
    expect((await remove(made.id)).statusCode).toBe(204);
  });

  it('e-mails an alert as text and HTML with the link to it, through a real SMTP server; no personal data unless allowed', async () => {
    const plain = await channel({ kind: 'email', target: 'soc@corp.example, ciso@corp.example' });
    const personal = await channel({ kind: 'email', target: 'dpo@corp.example', personal_data: true });
    await monitor('mail.example');
    expect((await ingest([{ email: 'ceo@mail.example', ip: '198.51.100.20', password: 'Summer2026!' }])).alerts_raised).toBe(1);
    await deliver();
    expect(smtp.mails).toHaveLength(2);
    const alert = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/monitoring/alerts/?search=mail.example' })).results[0];
    const toPlain = smtp.mails.find((x) => x.to && JSON.stringify(x.to).includes('soc@corp.example'))!;
    expect(toPlain.subject).toBe('[threatmon] New alert: Watch mail.example');
    expect(toPlain.from?.text).toContain('alerts@threatmon.example');
    expect(JSON.stringify(toPlain.to)).toContain('ciso@corp.example');
    const link = `${PUBLIC}/alerts/${alert.id}/`; // the console's page for it
    expect(toPlain.text).toContain(link);
    expect(toPlain.html).toContain(`href="${link}"`);
    for (const secret of ['ceo@mail.example', '198.51.100.20', 'S*********!']) expect(`${toPlain.text} ${String(toPlain.html)}`).not.toContain(secret);
    const toPersonal = smtp.mails.find((x) => JSON.stringify(x.to).includes('dpo@corp.example'))!;
    expect(toPersonal.text).toContain('ceo@mail.example');
    expect(toPersonal.text).toContain('198.51.100.20');
    for (const c of [plain, personal]) await remove(c.id);
  });

  it("posts each chat service's documented shape, readable and without personal data", async () => {
    const kinds = ['slack', 'mattermost', 'discord', 'teams'] as const;
    const made = await Promise.all(kinds.map((kind) => channel({ kind, target: `${base}/${kind}` })));
    await monitor('chat.example');
    // Another organization watching the same domain: its alert reaches none of these channels.
    await t.as(other.owner, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Theirs', type: 'domain', terms: ['chat.example'] } });
    expect((await ingest([{ email: 'cfo@chat.example', username: 'cfo', ip: '203.0.113.44', password: 'hunter2' }])).alerts_raised).toBe(2);
    await deliver();
    for (const kind of kinds) expect(bodiesAt(`/${kind}`), kind).toHaveLength(1);
    const [slack] = bodiesAt('/slack');
    expect(slack).toMatchObject({ text: expect.stringContaining('Watch chat.example'), blocks: expect.any(Array) });
    expect(slack!.blocks.map((b: { type: string }) => b.type)).toEqual(['header', 'section', 'actions', 'context']);
    expect(slack!.blocks[2].elements[0]).toMatchObject({ type: 'button', url: expect.stringMatching(new RegExp(`^${PUBLIC}/alerts/[0-9a-f-]{36}/$`)) });
    const [mattermost] = bodiesAt('/mattermost');
    expect(mattermost!.attachments[0]).toMatchObject({ title: 'New alert: Watch chat.example', title_link: expect.stringContaining(PUBLIC), fields: expect.arrayContaining([{ short: true, title: 'Found', value: 'domain' }]) });
    const [discord] = bodiesAt('/discord');
    expect(discord!.embeds[0]).toMatchObject({ title: 'New alert: Watch chat.example', url: expect.stringContaining(PUBLIC), color: expect.any(Number), fields: expect.arrayContaining([{ name: 'Source', value: 'Notify dump', inline: true }]) });
    const [teams] = bodiesAt('/teams');
    expect(teams).toMatchObject({ type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: { type: 'AdaptiveCard', version: '1.4' } }] });
    expect(teams!.attachments[0].content.actions[0]).toMatchObject({ type: 'Action.OpenUrl', url: expect.stringContaining(PUBLIC) });
    for (const body of [slack, mattermost, discord, teams]) {
      const text = JSON.stringify(body);
      for (const secret of ['cfo@chat.example', '203.0.113.44', 'h*****2', '"cfo"']) expect(text).not.toContain(secret);
      expect(text).toContain('Notify dump');
    }
    for (const c of made) await remove(c.id);
  });

  it('sends at most per_minute messages a minute and one digest for the rest: a burst of 500 alerts, all accounted for', async () => {
    const c = await channel({ kind: 'slack', target: `${base}/burst` });
    await monitor('burst.example');
    expect((await ingest(Array.from({ length: 500 }, (_, i) => ({ email: `user${i}@burst.example` })))).alerts_raised).toBe(500);
    await deliver();
    expect(bodiesAt('/burst')).toHaveLength(10);
    // The minute ends: its digest goes out, once.
    t.clock.advance(61);
    await deliver();
    await deliver();
    const bodies = bodiesAt('/burst');
    expect(bodies).toHaveLength(11);
    expect(bodies[10]!.text).toBe('490 new alerts on 1 monitor, highest severity low');
    expect(await t.services.notifications.sender.countByStatus(c.id)).toEqual({ sent: 11, digested: 490 });
    await remove(c.id);
  });

  it('counts a minute exactly across concurrent ingests into several channels', async () => {
    const a = await channel({ kind: 'slack', target: `${base}/race-a` });
    const b = await channel({ kind: 'discord', target: `${base}/race-b` });
    await monitor('race.example');
    const batch = (k: number) => Array.from({ length: 30 }, (_, i) => ({ email: `r${k}-${i}@race.example` }));
    const results = await Promise.all([ingest(batch(1)), ingest(batch(2)), ingest(batch(3))]);
    expect(results.map((r) => r.alerts_raised)).toEqual([30, 30, 30]);
    t.clock.advance(61);
    await deliver();
    await deliver();
    for (const [c, p] of [[a, '/race-a'], [b, '/race-b']] as const) {
      expect(bodiesAt(p)).toHaveLength(11);
      expect(await t.services.notifications.sender.countByStatus(c.id)).toEqual({ sent: 11, digested: 80 });
      await remove(c.id);
    }
  });

  it('retries a target that answers 500, then 200, and delivers the message once; the channel shows failing meanwhile', async () => {
    const c = await channel({ kind: 'discord', target: `${base}/flaky` });
    await monitor('flaky.example');
    let calls = 0;
    receiver.answer = (r) => (r.path === '/flaky' && ++calls === 1 ? 500 : 200);
    await ingest([{ email: 'a@flaky.example' }]);
    await deliver();
    const failing = json(await t.as(m.analyst, { method: 'GET', url: `/api/v1/notifications/channels/${c.id}/` }));
    expect(failing).toMatchObject({ status: 'failing', consecutive_failures: 1, last_error: expect.stringContaining('500'), last_failure_at: expect.any(String) });
    await deliver();
    expect(bodiesAt('/flaky')).toHaveLength(1);
    t.clock.advance(10);
    await deliver();
    expect(bodiesAt('/flaky')).toHaveLength(2);
    expect(json(await t.as(m.analyst, { method: 'GET', url: `/api/v1/notifications/channels/${c.id}/` }))).toMatchObject({ status: 'healthy', consecutive_failures: 0, last_success_at: expect.any(String) });
    expect(await t.services.notifications.sender.countByStatus(c.id)).toEqual({ sent: 1 });
    expect(await t.db.selectFrom('audit_log').select('id').where('action', '=', 'notification_channel.failing').where('target_id', '=', c.id).execute()).toHaveLength(1);
    const metrics = (await t.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('threatmon_notifications_total{kind="discord",outcome="retried"} 1');
    expect(metrics).toMatch(/threatmon_notifications_total\{kind="discord",outcome="sent"\} \d+/);
    receiver.answer = () => 200;
    await remove(c.id);
  });

  it('keeps a failing channel for 24 hours of retries and never disables it; filters by severity and monitor', async () => {
    const down = await channel({ kind: 'slack', target: `${base}/down` });
    receiver.answer = (r) => (r.path === '/down' ? 503 : 200);
    const watched = await monitor('filter.example');
    await monitor('unwatched.example');
    const filtered = await channel({ kind: 'slack', target: `${base}/filtered`, monitors: [watched.id], min_severity: 'high' });
    await ingest([{ email: 'x@filter.example', password: 'pw-filter-1' }, { email: 'y@unwatched.example', password: 'pw-filter-2' }]);
    for (let hour = 0; hour < 26; hour++) {
      await deliver();
      t.clock.advance(3600);
    }
    expect(await t.services.notifications.sender.countByStatus(down.id)).toEqual({ given_up: 2 });
    // Done messages are pruned after the retention (30 days by default), not before.
    await t.services.notifications.sender.prune();
    expect(await t.services.notifications.sender.countByStatus(down.id)).toEqual({ given_up: 2 });
    t.clock.advance(31 * 86400);
    await t.services.notifications.sender.prune();
    expect(await t.services.notifications.sender.countByStatus(down.id)).toEqual({});
    expect(json(await t.as(m.analyst, { method: 'GET', url: `/api/v1/notifications/channels/${down.id}/` }))).toMatchObject({ is_active: true, status: 'failing' });
    expect(await t.db.selectFrom('audit_log').select('id').where('action', '=', 'notification.given_up').where('target_id', '=', down.id).execute()).toHaveLength(2);
    expect(bodiesAt('/filtered').map((b) => b.text)).toEqual([expect.stringContaining('Watch filter.example')]);
    receiver.answer = () => 200;
    for (const c of [down, filtered]) await remove(c.id);
  });

  it("keeps a disabled channel's messages waiting, untried, and sends them once it is active again", async () => {
    const c = await channel({ kind: 'slack', target: `${base}/paused` });
    await monitor('paused.example');
    await ingest([{ email: 'p@paused.example' }]);
    const patch = (is_active: boolean) => t.as(m.admin, { method: 'PATCH', url: `/api/v1/notifications/channels/${c.id}/`, payload: { is_active } });
    expect((await patch(false)).statusCode).toBe(200);
    t.clock.advance(3600);
    await deliver();
    expect(bodiesAt('/paused')).toEqual([]);
    const waiting = await t.db.selectFrom('notification_messages').select(['status', 'attempts']).where('channel_id', '=', c.id).execute();
    expect(waiting.map((w) => [w.status, Number(w.attempts)])).toEqual([['queued', 0]]);
    expect((await patch(true)).statusCode).toBe(200);
    await deliver();
    expect(bodiesAt('/paused')).toHaveLength(1);
    await remove(c.id);
  });

  it('test/ sends a sample now and answers what the target said', async () => {
    const slack = await channel({ kind: 'slack', target: `${base}/tested` });
    const ok = json(await t.as(m.admin, { method: 'POST', url: `/api/v1/notifications/channels/${slack.id}/test/` }));
    expect(ok).toMatchObject({ delivered: true, status_code: 200, response: 'ok', error: null });
    expect(bodiesAt('/tested')[0]!.text).toContain('Sample monitor');
    receiver.answer = (r) => (r.path === '/tested' ? 400 : 200);
    const refused = json(await t.as(m.admin, { method: 'POST', url: `/api/v1/notifications/channels/${slack.id}/test/` }));
    expect(refused).toMatchObject({ delivered: false, status_code: 400, error: expect.stringContaining('400') });
    receiver.answer = () => 200;
    const mail = await channel({ kind: 'email', target: 'test@corp.example' });
    const sent = json(await t.as(m.admin, { method: 'POST', url: `/api/v1/notifications/channels/${mail.id}/test/` }));
    expect(sent).toMatchObject({ delivered: true, status_code: 250 });
    expect((await t.as(m.analyst, { method: 'POST', url: `/api/v1/notifications/channels/${mail.id}/test/` })).statusCode).toBe(403);
    for (const c of [slack, mail]) await remove(c.id);
  });
});

describe('notifications across a restart', () => {
  it('loses nothing queued when the process stops mid-burst', async () => {
    const receiver = new Receiver();
    const base = await receiver.start();
    const dir = mkdtempSync(path.join(tmpdir(), 'tm-notify-'));
    const dbUrl = TEST_PG_URL ? await testDatabaseUrl() : `sqlite:${path.join(dir, 'db.sqlite')}`;
    const env = { THREATMON_DATABASE_URL: dbUrl, THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' };
    let t = await buildTestApp(env);
    try {
      const team = await t.createTeam('enterprise', 'restarted', 'restart');
      const staff = (await t.createOrg('enterprise', 'restart-platform', true)).owner;
      const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Restart dump' } })).id;
      await t.as(team.members.admin, { method: 'POST', url: '/api/v1/notifications/channels/', payload: { kind: 'mattermost', name: 'ops', target: `${base}/ops`, events: ['alert.created'], per_minute: 5 } });
      await t.as(team.members.analyst, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Restart', type: 'domain', terms: ['restart.example'] } });
      await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: Array.from({ length: 40 }, (_, i) => ({ email: `u${i}@restart.example` })) });
      // Stopped before anything was sent; the clock of the next process is a minute on.
      const now = t.clock.now();
      await t.close();
      t = await buildTestApp(env);
      t.clock.advance((now.getTime() - t.clock.now().getTime()) / 1000 + 61);
      await t.services.notifications.sender.deliverDue();
      await t.services.notifications.sender.deliverDue();
      const bodies = receiver.received.map((r) => JSON.parse(r.body) as { text: string });
      expect(bodies).toHaveLength(6);
      expect(bodies.at(-1)!.text).toBe('35 new alerts on 1 monitor, highest severity low');
    } finally {
      await t.close();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('notification e-mail over STARTTLS', () => {
  it('upgrades to TLS when the SMTP server offers STARTTLS', async () => {
    const smtp = await smtpServer({ starttls: true });
    // The test server's certificate is self-signed: the URL says to take it, as nodemailer reads it.
    const t = await buildTestApp({ THREATMON_SMTP_URL: `smtp://127.0.0.1:${smtp.port}/?tls.rejectUnauthorized=false` });
    try {
      const team = await t.createTeam('enterprise', 'tls-mail', 'tls-mail');
      const made = json(await t.as(team.members.admin, { method: 'POST', url: '/api/v1/notifications/channels/', payload: { kind: 'email', name: 'mail', target: 'soc@corp.example', events: ['alert.created'] } }));
      const res = json(await t.as(team.members.admin, { method: 'POST', url: `/api/v1/notifications/channels/${made.id}/test/` }));
      expect(res).toMatchObject({ delivered: true, status_code: 250 });
      expect(smtp.secure).toEqual([true]);
      expect(smtp.mails[0]?.subject).toBe('[threatmon] Test: New alert: Sample monitor');
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});
