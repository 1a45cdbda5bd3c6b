import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createServices } from '../app.js';
import { type Separator } from '../domain/dump-lines.js';

import { ImportError, type ImportFormat, importLeaks } from './import-leaks.js';
import { type Config, ConfigError, isPostgresUrl, loadConfig, parseWorkers, PLANS, type Plan, redactedUrl } from '../config.js';
import { serve } from './serve.js';
import { seedDemo } from './seed-demo.js';
import { prepareDatabase } from '../db/prepare.js';
import { createDeps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { ROLES, type Role } from '../modules/identity/index.js';
import { DEFAULT_EXPANSION, IMPORT_FORMATS, SOURCE_KINDS, type SourceKind } from '../modules/leaks/index.js';

function config(): Config {
  return loadConfig(process.env);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Runs `fn` with the services on a migrated database, closing it afterwards. */
async function withServices<T>(fn: (s: ReturnType<typeof createServices>, deps: ReturnType<typeof createDeps>) => Promise<T>): Promise<T> {
  const deps = createDeps(config());
  try {
    await prepareDatabase(deps.database);
    return await fn(createServices(deps), deps);
  } finally {
    await deps.counters.close();
    await deps.database.close();
  }
}

const parsePlan = (v: string): Plan => {
  if (!PLANS.includes(v as Plan)) throw new InvalidArgumentError(`expected one of ${PLANS.join(', ')}`);
  return v as Plan;
};

/** --separator: one of the separators dumps use; `\t` (or "tab") for a tab. */
/** A whole number from 1 up, for a limit given on the command line. */
function positiveInteger(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < 1 || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected a whole number from 1');
  return n;
}

function separatorOf(v: string): Separator {
  const s = v === '\\t' || v.toLowerCase() === 'tab' ? '\t' : v;
  if (![':', ';', '|', ' ', '\t'].includes(s)) throw new InvalidArgumentError('expected one of ":", ";", "|", " " or "\\t"');
  return s as Separator;
}

export function buildCli(): Command {
  const program = new Command('threatmon')
    .description('threatmon: threat-monitoring REST API. Configuration comes from THREATMON_* environment variables (see README).')
    .showHelpAfterError()
    .exitOverride((err) => {
      throw err;
    });

  program
    .command('serve', { isDefault: true })
    .description('Migrate the database, create the first admin on an empty database, and serve the API (default command).')
    .addOption(
      new Option('--workers <n>', 'API processes sharing the port: a number, or auto for one per core (default THREATMON_WORKERS, else 1)').argParser((v) => {
        try {
          return parseWorkers('--workers', v);
        } catch (err) {
          throw new InvalidArgumentError((err as Error).message.replace(/^--workers: /, ''));
        }
      }),
    )
    .action(async (opts: { workers?: number }) => {
      const cfg = config();
      await serve(opts.workers ? { ...cfg, workers: opts.workers } : cfg);
    });

  const corpus = program.command('corpus').description('The leak corpus spread over several PostgreSQL servers (THREATMON_CORPUS_SHARDS).');
  corpus
    .command('add-shard')
    .description('Add a PostgreSQL server to the corpus and move its share of the records to it, online: searches and ingests go on meanwhile. Then add its URL to THREATMON_CORPUS_SHARDS (at the end). Run it again with the same URL to finish one that was cut off.')
    .argument('<url>', 'postgres://user:password@host:port/database of an empty database (max_prepared_transactions above 0)')
    .action(async (url: string) => {
      if (!isPostgresUrl(url)) throw new InvalidArgumentError('expected a postgres://... URL');
      const deps = createDeps(config());
      try {
        const shards = deps.database.corpusShards;
        if (!shards) throw new InvalidArgumentError('THREATMON_CORPUS_SHARDS is not set: the corpus is not spread over shards');
        await prepareDatabase(deps.database);
        const { addShard } = await import('../db/corpus-rebalance.js');
        const started = Date.now();
        const moves = await addShard(deps.database.db, shards, url, (m) =>
          console.error(`slot ${m.slot}: shard ${m.from} -> shard ${m.to}, ${m.copied + m.caughtUp} records (${m.caughtUp} written during the copy), ${((Date.now() - started) / 1000).toFixed(1)} s`),
        );
        console.log(`Added as shard ${shards.shards.length - 1}: ${moves.length} slots moved (${moves.reduce((n, m) => n + m.copied + m.caughtUp, 0)} records). Add it to THREATMON_CORPUS_SHARDS: ${[...shards.urls, url].map(redactedUrl).join(',')}`);
      } finally {
        await deps.counters.close();
        await deps.database.close();
      }
    });

  program
    .command('migrate')
    .description('Apply pending database migrations and exit.')
    .action(async () => {
      const deps = createDeps(config());
      try {
        const applied = await prepareDatabase(deps.database);
        console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
      } finally {
        await deps.database.close();
      }
    });

  program
    .command('openapi')
    .description('Print the OpenAPI 3.1 document that /api/schema/ serves (for client generators and linters), without a database or a server.')
    .option('--output <file>', 'write it to this file instead of standard output')
    .action(async (opts: { output?: string }) => {
      const { openApiDocument } = await import('./openapi-document.js');
      const text = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
      if (opts.output) {
        const fs = await import('node:fs');
        const path = await import('node:path');
        fs.mkdirSync(path.dirname(opts.output), { recursive: true });
        fs.writeFileSync(opts.output, text);
      } else process.stdout.write(text);
    });

  program
    .command('create-org')
    .description('Create an organization (without users; add them with create-user).')
    .argument('<name>', 'organization name (unique)')
    .addOption(new Option('--plan <plan>', `plan: ${PLANS.join(', ')}`).default('starter').argParser(parsePlan))
    .action(async (name: string, opts: { plan: Plan }) => {
      await withServices(async (s) => {
        const { org } = await s.orgs.create({ name, plan: opts.plan, owner: undefined });
        console.log(`Created organization "${org.name}" (${org.id}), plan ${org.plan}.`);
      });
    });

  program
    .command('create-user')
    .description('Create a user in an organization. Without --password-stdin a password is generated and printed once.')
    .requiredOption('--org <name>', 'organization name')
    .requiredOption('--username <username>', 'login name (unique)')
    .addOption(
      new Option('--role <role>', `role: ${ROLES.join(', ')}`).makeOptionMandatory().argParser((v) => {
        if (!ROLES.includes(v as Role)) throw new InvalidArgumentError(`expected one of ${ROLES.join(', ')}`);
        return v as Role;
      }),
    )
    .option('--email <email>', 'e-mail address (default <username>@example.com)')
    .option('--staff', 'platform operator: manages leak sources and organizations', false)
    .option('--password-stdin', 'read the password from standard input', false)
    .action(async (opts: { org: string; username: string; role: Role; email?: string; staff: boolean; passwordStdin: boolean }) => {
      const { randomBytes } = await import('node:crypto');
      const password = opts.passwordStdin ? await readStdin() : randomBytes(18).toString('base64url');
      await withServices(async (s, deps) => {
        const org = await s.orgs.findByName(opts.org);
        if (!org) throw new CliError(`No organization named "${opts.org}".`);
        const user = await deps.database.db
          .transaction()
          .execute((trx) =>
            s.users.insertUser(trx, org.id, {
              username: opts.username,
              email: opts.email ?? `${opts.username}@example.com`,
              password,
              role: opts.role,
              isStaff: opts.staff,
            }),
          );
        console.log(`Created user "${user.username}" (${user.id}), role ${user.role}${user.is_staff ? ', staff' : ''}.`);
        if (!opts.passwordStdin) console.log(`Password: ${password}\nKeep it now: it is not shown again.`);
      });
    });

  program
    .command('import-leaks')
    .description(
      'Load leaked data into a leak source, as it comes: combolists (login:secret), stealer-log lines (url:login:password), CSV or TSV (with a header, or --columns), NDJSON or a JSON array; gzipped or zipped (every member); UTF-8, UTF-16 with a BOM, or Windows-1252 lines. The format is detected from the content and said. Same rules as the API: validated, normalised, no plaintext password stored, duplicates skipped; lines that cannot be read are counted and listed, never fatal.',
    )
    .argument('<file>', 'the file: plain, .gz or .zip, any size')
    .requiredOption('--source <name>', 'name of the leak source to load into')
    .addOption(new Option('--format <format>', 'the format, instead of detecting it from the content').choices([...IMPORT_FORMATS]))
    .addOption(new Option('--separator <char>', 'the separator of a combolist or stealer log (tab: "\\t"), instead of detecting it').argParser(separatorOf))
    .option('--columns <names>', 'the columns of a headerless CSV or TSV, comma-separated (e.g. email,password,extra_city)', (v: string) => v.split(',').map((c) => c.trim()))
    .addOption(new Option('--kind <kind>', 'what the source is, set on it (new or not): breach, combolist, stealer_log, paste or other').choices([...SOURCE_KINDS]))
    .option('--rejects <file>', 'write every rejected line or record there, as NDJSON (line number, reason, text)')
    .option('--create-source', 'create the source when it does not exist', false)
    .option('--no-progress', 'no progress bar (a line every few seconds instead)')
    .addOption(new Option('--max-expansion-ratio <n>', 'a compressed member (gzip, zip) that gives more than n bytes per compressed byte, once past its first 16 MiB, is ended there: the records read before it are stored and the next member is read').default(DEFAULT_EXPANSION.ratio).argParser(positiveInteger))
    .addOption(new Option('--max-expanded-size <bytes>', 'a compressed member that gives more bytes than this is ended there, as above').default(DEFAULT_EXPANSION.bytes).argParser(positiveInteger))
    .option('--bulk', 'For large files: set the search indexes aside while loading and rebuild them at the end (several times faster; searches are slower meanwhile, and on SQLite full-text searches answer 503 until it ends)', false)
    .addHelpText(
      'after',
      '\nCombolists: the first separator (":", ";", "|" or tab) splits login from secret; a login that parses as an e-mail is the e-mail, else the username; a secret of 40 hex digits is a SHA-1, one of 32 or 64 hex digits, a bcrypt or an argon2 hash is kept as a hash (extra.password_hash, extra.hash_type), anything else is a password (hashed and masked, never stored).\nStealer logs: url<SEP>login<SEP>password with ":", "|", ";", space or tab; the URL\'s host is the record\'s domain unless the login is an e-mail (the URL is kept in extra.url), an Android app id in extra.app.\nCSV and TSV columns named email, username, domain, ip, phone, full_name, password, password_sha1 or leaked_at fill those fields; any other column goes to extra.\nBlank lines and lines starting with # are skipped; a line longer than 4,096 characters (NDJSON: 1 MiB) is rejected as it streams, never held whole.\nExit status: 0 when the file was read to its end (rejected lines are counted and listed, not fatal), 1 on a fatal error (a file broken part-way: the records before the broken place are stored, and the message says how many) or when a compressed member was ended by the expansion limits (every other member is still read and stored), 130 when stopped by Ctrl-C (143 by SIGTERM): the records read until then are stored, and running the same command again loads the rest.',
    )
    .action(
      async (
        file: string,
        opts: { source: string; format?: ImportFormat; separator?: Separator; columns?: string[]; rejects?: string; kind?: SourceKind; createSource: boolean; progress: boolean; bulk: boolean; maxExpansionRatio: number; maxExpandedSize: number },
      ) => {
        const stop = stopOnSignal();
        try {
          await withServices(async (s) => {
            const report = await importLeaks(s.leaks, {
              file,
              source: opts.source,
              format: opts.format,
              separator: opts.separator,
              columns: opts.columns,
              rejects: opts.rejects,
              expansion: { ratio: opts.maxExpansionRatio, bytes: opts.maxExpandedSize },
              kind: opts.kind,
              createSource: opts.createSource,
              progress: opts.progress ? undefined : false,
              bulk: opts.bulk,
              signal: stop.signal,
            });
            if (report.interrupted) process.exitCode = stop.exitCode;
            // The alerts it raised appended a count row each: folded now rather than left to a server.
            await s.monitoring.foldAlertCounts();
          });
        } finally {
          stop.dispose();
        }
      },
    );

  program
    .command('seed-demo')
    .description('Fill the database with a demo: organization "Demo" with one user per role (passwords printed once), three incidents with IOCs, and a leak source of generated records. Refuses when "Demo" exists.')
    .addOption(
      new Option('--records <n>', 'generated leak records').default(5000).argParser((v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 0 || n > 1_000_000) throw new InvalidArgumentError('expected a whole number from 0 to 1000000');
        return n;
      }),
    )
    .action(async (opts: { records: number }) => {
      await withServices(async (s, deps) => {
        const progress = process.stderr.isTTY ? (done: number) => process.stderr.write(`\r  ${done} of ${opts.records} records`) : undefined;
        const report = await seedDemo(s, deps.database.db, { records: opts.records, onProgress: progress });
        if (progress) process.stderr.write('\n');
        console.log(`Created organization "${report.organization}" (plan professional) with these users; keep the passwords now, they are not shown again:`);
        for (const u of report.users) console.log(`  ${u.role.padEnd(8)} username: ${u.username.padEnd(13)} password: ${u.password}`);
        console.log(`2 monitors, ${report.incidents} incidents with ${report.iocs} IOCs; leak source "${report.source}" holds ${report.records} generated records.`);
      });
    });

  return program;
}

export class CliError extends Error {}

/**
 * Ctrl-C (SIGINT) or SIGTERM stops a long command gracefully: `signal` aborts, and the command
 * stores what it has read and ends as it would at the end of its input. The SIGINT handler goes at
 * the first signal, so a second Ctrl-C ends the process at once, even inside a synchronous step
 * such as a bulk load's index rebuild (which the next import or `threatmon serve` then finishes).
 * A repeated SIGTERM changes nothing (the launcher passes one on that may also reach the process
 * directly); a process manager's SIGKILL ends it.
 */
function stopOnSignal() {
  const controller = new AbortController();
  const stop = { signal: controller.signal, exitCode: 130, dispose: () => {} };
  const onSignal = (name: NodeJS.Signals) => {
    process.off('SIGINT', onSignal);
    if (controller.signal.aborted) return;
    stop.exitCode = name === 'SIGINT' ? 130 : 143;
    process.stderr.write(`\n${name}: stopping after the records read so far are stored (Ctrl-C again to quit at once).\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  stop.dispose = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  return stop;
}

function explain(err: unknown): string {
  if (err instanceof ConfigError) return `configuration error: ${err.message}`;
  if (err instanceof AppError) return err.detail;
  if (err instanceof CliError || err instanceof ImportError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

export async function main(argv = process.argv): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') process.exit(0);
    if (code?.startsWith('commander.')) process.exit(2);
    console.error(`threatmon: ${explain(err)}`);
    process.exit(1);
  }
}

// Run when executed directly (node dist/cli/main.js, tsx src/cli/main.ts); bin/threatmon.js calls main() itself.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
