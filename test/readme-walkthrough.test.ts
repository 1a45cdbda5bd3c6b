import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/free-port.js';
import { startServer, stopServers } from './helpers/serve.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const ADMIN_PASSWORD = 'a walk-through admin passphrase';

/** One command of the walk-through, as pasted, and what the README says it answers (its `# ...` lines after it). */
interface Step {
  command: string;
  said: string[];
}

/**
 * The README's walk-through (its `sh` blocks from "A walk-through with curl" to "Configuration"),
 * cut into commands: a command is a line that is no comment, no continuation of a line ending in
 * `\`, and not inside a quoted string spanning lines (`node -e '...'`).
 */
function walkthrough(readme: string): Step[] {
  const part = readme.slice(readme.indexOf('## A walk-through with curl'), readme.indexOf('## Configuration'));
  const steps: Step[] = [];
  for (const [, block] of part.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let open = false;
    let continued = false;
    for (const line of (block as string).split('\n')) {
      const current = steps.at(-1);
      if (open || continued) {
        (current as Step).command += `\n${line}`;
      } else if (line.startsWith('#')) {
        current?.said.push(line.replace(/^#\s?/, ''));
        continue;
      } else if (line.trim() !== '') {
        steps.push({ command: line, said: [] });
      } else {
        continue;
      }
      // Single quotes open and close strings (the walk-through has none inside double quotes that span lines).
      open = (line.match(/'/g)?.length ?? 0) % 2 === 1 ? !open : open;
      continued = !open && line.endsWith('\\');
    }
  }
  return steps;
}

/** `"key":value` pairs of a README comment whose value is written out (not `...` or `<...>`). */
function literalPairs(said: string): string[] {
  return [...said.matchAll(/"[a-z_]+":(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)].map((m) => m[0]).filter((p) => !p.includes('...') && !/<[^>"]*>/.test(p));
}

describe("the README's walk-through, pasted into a shell", () => {
  let server: ChildProcess;
  let base: string;
  let dir: string;
  const ports = { receiver: 0, smtp: 0 };
  let demoPassword: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-readme-'));
    ports.receiver = await freePort();
    ports.smtp = await freePort();
    const env = {
      THREATMON_DATABASE_URL: `sqlite:${path.join(dir, 'readme.db')}`,
      THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true',
      THREATMON_SMTP_URL: `smtp://127.0.0.1:${ports.smtp}`,
    };
    ({ base, child: server } = await startServer(env));
    // The demo block logs in as seed-demo's analyst, with the password seed-demo prints.
    const seeded = await new Promise<string>((resolve) => {
      const seed = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'seed-demo', '--records', '200'], { cwd: ROOT, env: { ...process.env, ...env, THREATMON_LOG_LEVEL: 'warn' } });
      let out = '';
      seed.stdout.on('data', (d) => (out += d));
      seed.on('close', () => resolve(out));
    });
    demoPassword = /username: demo-analyst\s+password: (\S+)/.exec(seeded)?.[1] ?? '';
    expect(demoPassword, seeded).not.toBe('');
  }, 120_000);
  afterAll(async () => {
    await stopServers([server]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs as written, and each command answers what the README says it answers', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const steps = walkthrough(readme);
    expect(steps.length).toBeGreaterThan(60);
    // The placeholders a newcomer fills in by hand, and this machine's free ports and folder.
    const fill = (text: string) =>
      text
        .replaceAll("PASSWORD='the password printed at first start'", `PASSWORD='${ADMIN_PASSWORD}'`)
        .replaceAll("DEMO_PASSWORD='the password seed-demo printed for demo-analyst'", `DEMO_PASSWORD='${demoPassword}'`)
        .replaceAll('http://127.0.0.1:8000', base)
        .replaceAll('9999', String(ports.receiver))
        .replaceAll('2525', String(ports.smtp))
        .replaceAll('/tmp/', `${dir}/`);
    const script = steps
      .map((s, i) => `printf '\\n@@ %d\\n' ${i}\n${fill(s.command)}`)
      .join('\n');
    const run = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const shell = spawn('bash', ['-c', script], { cwd: ROOT, env: { ...process.env } });
      let out = '';
      let err = '';
      shell.stdout.on('data', (d) => (out += d));
      shell.stderr.on('data', (d) => (err += d));
      // A step that waits for what never comes (a receiver that did not start) fails the test, bounded.
      const bound = setTimeout(() => shell.kill(), 240_000);
      shell.on('close', (code) => {
        clearTimeout(bound);
        resolve({ code, out, err });
      });
    });
    expect(run.code, run.err).toBe(0);
    const outputs = new Map<number, string>();
    const parts = run.out.split(/^@@ (\d+)\n/m);
    for (let i = 1; i < parts.length; i += 2) outputs.set(Number(parts[i]), parts[i + 1] ?? '');
    const wrong: string[] = [];
    steps.forEach((step, i) => {
      const out = outputs.get(i) ?? '';
      for (const said of step.said) {
        for (const pair of literalPairs(fill(said))) if (!out.includes(pair)) wrong.push(`${step.command.split('\n')[0]}\n    says ${pair}\n    answered ${out.slice(0, 400)}`);
        // A bare number said for a bare number answered (a status code, a count).
        const number = /^(\d+)(?::|$| \()/.exec(said)?.[1];
        if (number && /^\d+$/.test(out.trim()) && out.trim() !== number) wrong.push(`${step.command.split('\n')[0]}\n    says ${number}, answered ${out.trim()}`);
      }
    });
    expect(wrong, wrong.join('\n')).toEqual([]);
    // What the receivers print, as the README shows it.
    expect(run.out).toContain('verified incident.created Pushed');
    expect(run.out).toMatch(/^verified ping [0-9a-f-]{36}$/m);
    // The link opens the alert's page in the console.
    expect(run.out).toMatch(/mail: \[threatmon\] New alert: Our domains \| Open in threatmon: http:\/\/127\.0\.0\.1:\d+\/alerts\/[0-9a-f-]{36}\//);
  }, 300_000);
});
