import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JWT_SECRET, TEST_PG_URL, testDatabaseUrl } from '../helpers/build-app.js';
import { Receiver } from '../helpers/receiver.js';
import { startServer as startServe, until, withDb } from '../helpers/serve.js';

/** Webhook delivery by real `threatmon serve` processes: after a SIGKILL, and from two processes on one PostgreSQL. */
const PASSWORD = 'a webhook test admin passphrase';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-hooks-'));
const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

async function startServer(url: string): Promise<{ base: string; child: ChildProcess }> {
  const server = await startServe({ THREATMON_DATABASE_URL: url, THREATMON_JWT_SECRET: JWT_SECRET, THREATMON_ADMIN_PASSWORD: PASSWORD, THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true', THREATMON_DATA_DIR: dir });
  children.add(server.child);
  server.child.on('close', () => children.delete(server.child));
  return server;
}

async function call(base: string, method: string, route: string, token: string | null, body?: unknown) {
  const res = await fetch(`${base}/api/v1${route}`, {
    method,
    headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text);
}



describe('webhook delivery by serve', () => {
  it('delivers an event left undelivered by a server killed outright, once restarted, with the same webhook-id', async () => {
    const url = TEST_PG_URL ? await testDatabaseUrl() : `sqlite:${path.join(dir, 'kill.db')}`;
    const receiver = new Receiver();
    const hookUrl = await receiver.start();
    try {
      let server = await startServer(url);
      const { access } = await call(server.base, 'POST', '/auth/token/', null, { username: 'admin', password: PASSWORD });
      await call(server.base, 'POST', '/webhooks/', access, { url: `${hookUrl}/soar`, events: ['incident.created'] });
      // The first attempt fails: the event waits for its retry when the server dies.
      receiver.answer = () => (receiver.received.length === 1 ? 503 : 200);
      const incident = await call(server.base, 'POST', '/incidents/', access, { title: 'Before the crash' });
      await receiver.next(1);
      await until('the failed attempt to be recorded', () => withDb(url, async (db) => (await db.selectFrom('webhook_messages').select('attempts').executeTakeFirst())?.attempts === 1));
      const closed = new Promise((resolve) => server.child.on('close', resolve));
      server.child.kill('SIGKILL');
      await closed;
      server = await startServer(url);
      await receiver.next(2);
      const [first, second] = receiver.received;
      expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
      expect(JSON.parse(second?.body ?? '{}')).toMatchObject({ type: 'incident.created', data: { id: incident.id } });
      server.child.kill('SIGTERM');
    } finally {
      await receiver.close();
    }
  });

  it.skipIf(!TEST_PG_URL)('delivers each event once with two API processes on one PostgreSQL', async () => {
    const url = await testDatabaseUrl();
    const receiver = new Receiver();
    const hookUrl = await receiver.start();
    try {
      const a = await startServer(url);
      const b = await startServer(url);
      const { access } = await call(a.base, 'POST', '/auth/token/', null, { username: 'admin', password: PASSWORD });
      await call(a.base, 'POST', '/webhooks/', access, { url: `${hookUrl}/siem`, events: ['incident.created'] });
      const n = 40;
      await Promise.all(Array.from({ length: n }, (_, i) => call(i % 2 ? a.base : b.base, 'POST', '/incidents/', access, { title: `Twice? ${i}` })));
      await receiver.next(n);
      await until('every message delivered', () => withDb(url, async (db) => (await db.selectFrom('webhook_messages').select('id').where('status', '!=', 'delivered').execute()).length === 0));
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(n);
      expect(new Set(ids).size).toBe(n);
      a.child.kill('SIGTERM');
      b.child.kill('SIGTERM');
    } finally {
      await receiver.close();
    }
  });
});
