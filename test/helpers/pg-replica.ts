import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

/** PostgreSQL's programs on this machine (Debian keeps them out of PATH). */
export function pgBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const version = fs.readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return version ? path.join(root, version, 'bin') : null;
}

/** PostgreSQL refuses to run as root: its programs run as the postgres user then. */
export function asPostgres(program: string, args: string[]): string {
  const run = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
  return execFileSync(run[0] as string, run[1] as string[], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface Replica {
  /** The replica's URL for the test database. */
  url: string;
  port: number;
  /** Stops it at once, as a crash would (pg_ctl stop -m immediate). */
  kill(): void;
  /** Starts it again after kill(). */
  start(): void;
  /** Stops it and removes its folder. */
  remove(): void;
}

/**
 * A streaming replica of the local PostgreSQL (the one `primaryUrl` names), on a free port, from
 * `pg_basebackup -R` into a temporary folder. Needs a `replication` line in pg_hba.conf for
 * 127.0.0.1 (`.ci/run` adds it) and copies the whole cluster: keep large databases off the machine.
 */
export async function startReplica(primaryUrl: string): Promise<Replica> {
  const bin = pgBin();
  if (!bin) throw new Error('PostgreSQL programs not found under /usr/lib/postgresql');
  const primary = new URL(primaryUrl);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-replica-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  fs.chmodSync(dir, 0o700);
  asPostgres(path.join(bin, 'pg_basebackup'), ['-h', primary.hostname, '-p', primary.port || '5432', '-U', primary.username || 'postgres', '-D', dir, '-R', '-X', 'stream', '-c', 'fast']);
  // Debian keeps the server's configuration outside the data folder: the replica gets its own.
  const conf = path.join(dir, 'postgresql.conf');
  fs.writeFileSync(conf, `port = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nhot_standby = on\nshared_buffers = 32MB\n`);
  fs.writeFileSync(path.join(dir, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
  fs.writeFileSync(path.join(dir, 'pg_ident.conf'), '');
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', conf, path.join(dir, 'pg_hba.conf'), path.join(dir, 'pg_ident.conf')]);
  const url = new URL(primaryUrl);
  url.port = String(port);
  return running(bin, dir, url.toString(), port, 'replica');
}

/**
 * A new, empty PostgreSQL server (initdb) on a free port, in a temporary folder: a shard for the
 * tests of a corpus spread over several servers. Its URL names its `postgres` database.
 */
export async function startServer(conf: Record<string, string> = {}): Promise<Replica> {
  const bin = pgBin();
  if (!bin) throw new Error('PostgreSQL programs not found under /usr/lib/postgresql');
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-shard-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  fs.chmodSync(dir, 0o700);
  asPostgres(path.join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale', 'C.UTF-8', '--no-sync']);
  fs.appendFileSync(path.join(dir, 'postgresql.conf'), `port = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nshared_buffers = 32MB\nfsync = off\nmax_connections = 50\nmax_prepared_transactions = 64\n${Object.entries(conf).map(([k, v]) => `${k} = ${v}\n`).join('')}`);
  return running(bin, dir, `postgres://postgres@127.0.0.1:${port}/postgres`, port, 'server');
}

/** The server of data folder `dir` started (pg_ctl), with what stops, starts again and removes it. */
function running(bin: string, dir: string, url: string, port: number, what: string): Replica {
  const pgCtl = (...args: string[]) => asPostgres(path.join(bin, 'pg_ctl'), ['-D', dir, ...args]);
  const start = () => pgCtl('-l', path.join(dir, 'server.log'), '-w', '-t', '120', 'start');
  try {
    start();
  } catch (err) {
    const log = fs.existsSync(path.join(dir, 'server.log')) ? fs.readFileSync(path.join(dir, 'server.log'), 'utf8').slice(-2000) : '';
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`the ${what} did not start: ${(err as Error).message}\n${log}`);
  }
  return {
    url,
    port,
    kill: () => pgCtl('-m', 'immediate', 'stop'),
    start,
    remove() {
      try {
        pgCtl('-m', 'immediate', 'stop');
      } catch {
        // Already stopped.
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
