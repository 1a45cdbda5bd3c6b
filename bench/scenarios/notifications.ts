import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { apiOf, freshDatabaseUrl, type Result, startServer, stop } from '../harness.js';

const ALERTS = 1000;
const TURNS = 4;

/** Counts what arrives: chat posts by path, e-mails. */
async function receivers() {
  const counts = new Map<string, number>();
  const bump = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  const web = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      bump(req.url ?? '');
      res.end('ok');
    });
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  const smtp = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false, onData: (stream, _s, done) => stream.on('end', () => (bump('email'), done())).resume() });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  return {
    web: `http://127.0.0.1:${(web.address() as AddressInfo).port}`,
    smtp: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    close: async () => {
      await new Promise((r) => web.close(r));
      await new Promise((r) => smtp.close(() => r(null)));
    },
  };
}

/**
 * Notifications (issue figures): one ingest raising 1,000 alerts, with 5 channels subscribed (e-mail
 * to a local SMTP server, Slack, Teams, Mattermost and Discord to a local receiver, per_minute 1,000
 * so that every alert is a message of its own) against the same ingest with the channels disabled,
 * in alternating turns; and the time from the ingest's answer until every channel has its messages.
 */
export const notificationsScenarios: Record<string, () => Promise<Result[]>> = {
  async notifications() {
    const peers = await receivers();
    const s = await startServer('notifications', { THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true', THREATMON_SMTP_URL: peers.smtp }, await freshDatabaseUrl('notifications'));
    try {
      const api = apiOf(s);
      await api('POST', '/monitoring/', { name: 'Notified', type: 'domain', terms: ['notify.example'], backfill: false });
      const source = (await api('POST', '/leaks/sources/', { name: `Notify bench ${Date.now()}` })).id as string;
      const channels: string[] = [];
      for (const kind of ['email', 'slack', 'teams', 'mattermost', 'discord']) {
        const target = kind === 'email' ? 'soc@bench.example' : `${peers.web}/${kind}`;
        channels.push((await api('POST', '/notifications/channels/', { kind, name: kind, target, events: ['alert.created'], per_minute: 1000 })).id);
      }
      const setActive = async (on: boolean) => {
        for (const id of channels) await api('PATCH', `/notifications/channels/${id}/`, { is_active: on });
      };
      let batch = 0;
      const ingest = async () => {
        batch += 1;
        const records = Array.from({ length: ALERTS }, (_, i) => ({ email: `u${batch}-${i}@notify.example` }));
        const started = performance.now();
        const res = await api('POST', `/leaks/sources/${source}/records/`, records);
        if (res.alerts_raised !== ALERTS) throw new Error(`raised ${res.alerts_raised} alerts, not ${ALERTS}`);
        return ALERTS / ((performance.now() - started) / 1000);
      };
      const without: number[] = [];
      const withChannels: number[] = [];
      const deliveredMs: number[] = [];
      for (let turn = 1; turn <= TURNS; turn++) {
        await setActive(false);
        without.push(await ingest());
        await setActive(true);
        const before = peers.total();
        withChannels.push(await ingest());
        const answered = performance.now();
        // Until the 5 channels hold their 1,000 messages each (a digest would come at the minute's end).
        while (peers.total() - before < 5 * ALERTS) {
          if (performance.now() - answered > 120_000) throw new Error(`after 120 s, ${peers.total() - before} of ${5 * ALERTS} messages`);
          await new Promise((r) => setTimeout(r, 20));
        }
        deliveredMs.push(performance.now() - answered);
        console.log(`  turn ${turn}: ${Math.round(without.at(-1)!)} records/s without channels, ${Math.round(withChannels.at(-1)!)} with 5; every channel had its ${ALERTS} messages ${Math.round(deliveredMs.at(-1)!)} ms after the ingest answered`);
        // The next turn in a minute of its own, so that none of its messages waits for a digest.
        await new Promise((r) => setTimeout(r, Math.max(0, 60_000 - (Date.now() % 60_000)) + 50));
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const pairs = withChannels.map((w, i) => w / without[i]!);
      console.log(`  ingest with 5 channels / without: ${(median(withChannels) / median(without)).toFixed(3)} (medians), turn by turn ${pairs.map((r) => r.toFixed(2)).join(', ')} (target at least 0.90)`);
      return [
        { scenario: `ingest raising ${ALERTS} alerts, no active channel (records/s)`, requests_per_sec: Math.round(median(without)), latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0 },
        { scenario: `ingest raising ${ALERTS} alerts, 5 channels (records/s)`, requests_per_sec: Math.round(median(withChannels)), latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0 },
        { scenario: `5 x ${ALERTS} messages delivered after the ingest (ms)`, requests_per_sec: 0, latency_p50_ms: Math.round(median(deliveredMs)), latency_p99_ms: Math.round(Math.max(...deliveredMs)), non_2xx: 0, errors: 0 },
      ];
    } finally {
      await stop(s);
      await peers.close();
    }
  },
};
