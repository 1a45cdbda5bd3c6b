import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, type TestApp, type TestOrg } from './helpers/build-app.js';
import { freePort } from './helpers/free-port.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The README's webhook receiver (step 12), as a newcomer pastes it, on a free port instead of 9999. */
function readmeReceiver(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const m = /node -e '\n(const \{ Webhook \}[\s\S]*?\.listen\(9999\);)' &/.exec(readme);
  if (!m?.[1]) throw new Error('the README has no webhook receiver in step 12');
  return m[1];
}

describe("the README's webhook receiver", () => {
  let t: TestApp;
  let org: TestOrg;
  let child: ChildProcess | undefined;
  let port: number;
  const printed: string[] = [];
  const waiters: Array<() => void> = [];

  /** Resolves once the receiver has printed `n` lines. */
  const lines = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (printed.length >= n ? resolve() : waiters.push(check));
      check();
    });

  /** Starts the receiver with the webhook's secret (it reads it from the environment, as in the README). */
  const startReceiver = (secret: string) => {
    child = spawn(process.execPath, ['-e', readmeReceiver().replace('.listen(9999)', `.listen(${port}, () => console.log("listening"))`)], {
      cwd: ROOT,
      env: { ...process.env, WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffered = '';
    child.stdout?.on('data', (d) => {
      buffered += d;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      printed.push(...parts);
      for (const w of waiters.splice(0)) w();
    });
  };

  beforeAll(async () => {
    port = await freePort();
    // Signatures carry a timestamp the receiver checks against its own clock: the app uses the real one.
    t = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' }, { clock: () => new Date() });
    org = await t.createOrg('enterprise', 'readme');
  });
  afterAll(async () => {
    child?.kill();
    await t.close();
  });

  it('prints what the README says it prints, for the ping and for an incident', async () => {
    const hook = json(await t.as(org.owner, { method: 'POST', url: '/api/v1/webhooks/', payload: { url: `http://127.0.0.1:${port}/hook`, events: ['incident.created'] } }));
    startReceiver(hook.secret);
    await lines(1);
    const ping = await t.as(org.owner, { method: 'POST', url: `/api/v1/webhooks/${hook.id}/test/` });
    expect(json(ping)).toMatchObject({ delivered: true, status_code: 200 });
    await lines(2);
    expect(printed[1]).toBe(`verified ping ${hook.id}`);
    await t.as(org.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'Pushed' } });
    await t.services.webhooks.deliverDue();
    await lines(3);
    expect(printed[2]).toBe('verified incident.created Pushed');
  });
});
