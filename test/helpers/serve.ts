import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

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
