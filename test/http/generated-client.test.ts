import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, PASSWORD, type TestApp } from '../helpers/build-app.js';
import { Receiver } from '../helpers/receiver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Harness {
  username: string;
  password: string;
  deliver: () => Promise<Array<{ body: string; headers: Record<string, string | string[] | undefined> }>>;
  settle: () => Promise<void>;
}
const run = promisify(execFile);

describe('a client generated from the OpenAPI document (openapi-typescript + openapi-fetch)', () => {
  let t: TestApp;
  let base: string;
  let dir: string;
  const receiver = new Receiver();

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    // Inside the project, so that the client resolves openapi-fetch from its node_modules.
    dir = mkdtempSync(path.join(ROOT, 'node_modules', '.generated-client-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await receiver.close();
    await t.close();
  });

  it('types a strict client from /api/schema/ that runs the whole journey against the server', async () => {
    const schema = await (await fetch(`${base}/api/schema/`)).json();
    writeFileSync(path.join(dir, 'schema.d.ts'), astToString(await openapiTS(schema)));
    copyFileSync(path.join(ROOT, 'test/generated-client/client.ts'), path.join(dir, 'client.ts'));
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, noUncheckedIndexedAccess: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2023', noEmit: true, skipLibCheck: true, types: ['node'] }, files: ['client.ts', 'schema.d.ts'] }),
    );
    // The type check: a failure prints tsc's errors.
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: ROOT }).catch((err: { stdout: string }) => expect.fail(err.stdout));

    const staff = (await t.createOrg('enterprise', 'client-platform', true)).owner;
    const receiverUrl = await receiver.start();
    // Its own type check is above; the root project does not compile it (it needs the generated types).
    const client = (await import(path.join(dir, 'client.ts'))) as { run: (base: string, receiverUrl: string, harness: Harness) => Promise<unknown> };
    const result = await client.run(base, receiverUrl, {
      username: staff.username,
      password: PASSWORD,
      settle: () => t.services.trackingTokens.settled(),
      deliver: async () => {
        await t.services.webhooks.deliverDue();
        return receiver.received.map((r) => ({ body: r.body, headers: r.headers }));
      },
    });
    expect(result).toEqual({
      apiKeyPrefix: 'tm_',
      incident: { id: expect.any(String), iocs: expect.arrayContaining(['domain:evil.example:', 'ipv4:203.0.113.66:2030-01-01T00:00:00.000Z']) },
      accepted: 2,
      alerts: ['client.example'],
      escalatedTo: expect.any(String),
      triggerStatus: 200,
      timeline: ['http'],
      event: { type: 'alert.created', term: 'client.example', email: 'ceo@client.example', monitor: 'Our domain' },
      signatureOk: true,
    });
  });
});
