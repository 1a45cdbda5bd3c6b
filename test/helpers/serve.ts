import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { DB } from '../../src/db/schema.js';
import { createDeps } from '../../src/deps.js';
import { JWT_SECRET } from './build-app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** `threatmon serve` with `env` (THREATMON_PORT 0: a free port), resolved with its address once it listens. */
export async function startServer(env: NodeJS.ProcessEnv): Promise<{ base: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], { cwd: ROOT, env: { ...process.env, THREATMON_PORT: '0', ...env, THREATMON_LOG_LEVEL: 'info' } });
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.stderr?.on('data', (d) => (out += d));
    child.on('close', () => reject(new Error(`the server ended before listening:\n${out}`)));
  });
  return { base, child };
}

/** Ends each server (SIGTERM, as a process manager would) and waits for it to close. */
export async function stopServers(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      const closed = new Promise((resolve) => child.on('close', resolve));
      child.kill('SIGTERM');
      await closed;
    }),
  );
}

/** `fn` on a Database of its own for `url` (and `env`, e.g. THREATMON_CORPUS_SHARDS), closed after. */
export async function withDatabase<T>(url: string, fn: (database: Database) => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const deps = createDeps(loadConfig({ THREATMON_DATABASE_URL: url, THREATMON_JWT_SECRET: JWT_SECRET, ...env }));
  try {
    return await fn(deps.database);
  } finally {
    await deps.database.close();
  }
}

/** `fn` on a connection of its own to the database at `url`, closed after. */
export const withDb = <T>(url: string, fn: (db: Kysely<DB>) => Promise<T>): Promise<T> => withDatabase(url, (database) => fn(database.db));

/** Waits for `check` to hold, asking again as the event loop turns (a bound on the number of tries, not on time). */
export async function until(what: string, check: () => Promise<boolean>, tries = 10_000) {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never: ${what}`);
}
