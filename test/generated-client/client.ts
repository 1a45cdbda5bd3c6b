/**
 * A client written only against the types openapi-typescript generates from GET /api/schema/
 * (./schema.js, written next to this file by test/http/generated-client.test.ts), calling the API
 * through openapi-fetch. The test type-checks it with tsc --strict, then runs it: a wrong path, a
 * missing field or a mistyped body fails the type check before anything runs.
 */
import { createHmac } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { paths, webhooks } from './schema.js';

type AlertCreated = webhooks['alert.created']['post']['requestBody']['content']['application/json'];

export interface Harness {
  username: string;
  password: string;
  /** Delivers the webhooks due and answers the bodies and headers the receiver got. */
  deliver: () => Promise<Array<{ body: string; headers: Record<string, string | string[] | undefined> }>>;
  /** Waits until the tracking-token hits in hand are recorded. */
  settle: () => Promise<void>;
}

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

export async function run(base: string, receiverUrl: string, h: Harness) {
  const anonymous = createClient<paths>({ baseUrl: base });
  const login = await anonymous.POST('/api/v1/auth/token/', { body: { username: h.username, password: h.password } });
  const access = must(login.data, 'token').access;
  const byToken = createClient<paths>({ baseUrl: base, headers: { authorization: `Bearer ${access}` } });

  const created = await byToken.POST('/api/v1/auth/api-keys/', { body: { name: 'generated client' } });
  const key = must(created.data, 'API key').key;
  // From here on, the API key: what a machine uses.
  const api = createClient<paths>({ baseUrl: base, headers: { authorization: `Bearer ${key}` } });

  const hook = must((await api.POST('/api/v1/webhooks/', { body: { url: `${receiverUrl}/hooks`, events: ['alert.created'] } })).data, 'webhook');

  const incident = must(
    (
      await api.POST('/api/v1/incidents/', {
        body: { title: 'Phishing wave', severity: 'high', iocs: [{ type: 'domain', value: 'evil[.]example' }, { type: 'ipv4', value: '203.0.113.66', expires_at: '2030-01-01T00:00:00Z' }] },
      })
    ).data,
    'incident',
  );
  const iocs = must((await api.GET('/api/v1/incidents/{id}/iocs/', { params: { path: { id: incident.id } } })).data, 'IOCs').results;

  const monitor = must((await api.POST('/api/v1/monitoring/', { body: { name: 'Our domain', type: 'domain', terms: ['client.example'] } })).data, 'monitor');
  const source = must((await api.POST('/api/v1/leaks/sources/', { body: { name: 'Generated-client dump' } })).data, 'source');
  const ingested = must(
    (
      await api.POST('/api/v1/leaks/sources/{id}/records/', {
        params: { path: { id: source.id } },
        body: [
          { email: 'ceo@client.example', password: 'Winter2026!', leaked_at: '2026-09-01' },
          { email: 'someone@elsewhere.example', username: 'someone' },
        ],
      })
    ).data,
    'ingest result',
  );

  const alerts = must((await api.GET('/api/v1/monitoring/alerts/', { params: { query: { monitor: monitor.id } } })).data, 'alerts').results;
  const alert = must(alerts[0], 'alert');
  const escalated = must((await api.POST('/api/v1/monitoring/alerts/{id}/escalate/', { params: { path: { id: alert.id } }, body: {} })).data, 'escalation');

  const token = must((await api.POST('/api/v1/tracking-tokens/', { body: { name: 'HR share bait', kind: 'web_bug' } })).data, 'tracking token');
  const triggerKey = must(new URL(must(token.trigger_url, 'trigger_url')).pathname.split('/')[2], 'trigger key');
  const hit = await anonymous.GET('/t/{key}/', { params: { path: { key: triggerKey } }, parseAs: 'blob' });
  await h.settle();
  const timeline = must((await api.GET('/api/v1/tracking-tokens/{id}/timeline/', { params: { path: { id: token.id } } })).data, 'timeline').results;

  // The delivery, typed from the document's webhooks section and checked as Standard Webhooks says.
  const deliveries = await h.deliver();
  const delivery = must(deliveries[0], 'delivery');
  const event = JSON.parse(delivery.body) as AlertCreated;
  const secret = Buffer.from(must(hook.secret, 'webhook secret').replace(/^whsec_/, ''), 'base64');
  const signed = `${String(delivery.headers['webhook-id'])}.${String(delivery.headers['webhook-timestamp'])}.${delivery.body}`;
  const signatureOk = String(delivery.headers['webhook-signature']) === `v1,${createHmac('sha256', secret).update(signed).digest('base64')}`;

  return {
    apiKeyPrefix: key.slice(0, 3),
    incident: { id: incident.id, iocs: iocs.map((i) => `${i.type}:${i.value}:${i.expires_at ?? ''}`) },
    accepted: ingested.accepted,
    alerts: alerts.map((a) => a.matched_term),
    escalatedTo: escalated.id,
    triggerStatus: hit.response.status,
    timeline: timeline.map((e) => e.channel),
    event: { type: event.type, term: event.data.matched_term, email: event.data.leak_record.email, monitor: event.data.monitor.name },
    signatureOk,
  };
}
