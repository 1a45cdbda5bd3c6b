/**
 * Full text in two engines on the same records, side by side: PostgreSQL's GIN index as
 * threatmon builds it (`to_tsvector('simple', search_text)`, a bare table of id, created_at and
 * search_text: the floor of today's statement) and ClickHouse's text index through the embedded
 * `chdb` package (a MergeTree table ordered by created_at, id: a search copy of the corpus). Each
 * search is the newest page of 50 and its count, checked to give the same ids and count in both,
 * then timed at BENCH_SEARCH_CONNECTIONS (16) for BENCH_DURATION seconds each.
 *   npm install --prefix /tmp/chdb chdb    (546 MB; not one of threatmon's dependencies)
 *   CHDB_MODULE=/tmp/chdb/node_modules/chdb/index.mjs node bench/fulltext-engines.mjs DATA_DIR WORK_DIR POSTGRES_URL
 * DATA_DIR: a generated corpus (bench/generate-leaks.ts); WORK_DIR keeps the normalised rows
 * (corpus.tsv, written once with threatmon's own normaliseRecord) and the chdb database.
 * (npm run build first: the rows are normalised by dist/.)
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { v7 as uuidv7 } from 'uuid';
import { normaliseRecord } from '../dist/domain/leak-record.js';
import { closedLoop } from './closed-loop.mjs';
import { corpusFiles } from './corpus-files.mjs';

const [dataDir, workDir, url] = process.argv.slice(2);
if (!dataDir || !workDir || !url || !process.env.CHDB_MODULE) {
  console.error('usage: CHDB_MODULE=.../chdb/index.mjs node bench/fulltext-engines.mjs DATA_DIR WORK_DIR POSTGRES_URL');
  process.exit(2);
}
const seconds = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_SEARCH_CONNECTIONS ?? 16);
const { Session } = await import(process.env.CHDB_MODULE);
fs.mkdirSync(workDir, { recursive: true });
const tsv = path.join(workDir, 'corpus.tsv');
const timed = async (label, run) => {
  const t = process.hrtime.bigint();
  const out = await run();
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  console.log(JSON.stringify({ step: label, seconds: Number(s.toFixed(1)) }));
  return out;
};

// 1. The stored rows, once: id (UUIDv7), created_at (a microsecond apart, in load order), search_text.
if (!fs.existsSync(tsv)) {
  await timed('normalise to corpus.tsv', async () => {
    const out = fs.createWriteStream(`${tsv}.part`);
    let at = Date.parse('2026-01-01T00:00:00Z') * 1000;
    let rows = 0;
    for (const file of corpusFiles(dataDir)) {
      const input = fs.createReadStream(path.join(dataDir, file));
      const lines = readline.createInterface({ input: file.endsWith('.gz') ? input.pipe(zlib.createGunzip()) : input, crlfDelay: Infinity });
      let chunk = '';
      for await (const line of lines) {
        const r = normaliseRecord(JSON.parse(line));
        if (!r.ok) continue;
        const micros = at++;
        const created = new Date(Math.floor(micros / 1000)).toISOString().replace('T', ' ').replace('Z', '') + String(micros % 1000).padStart(3, '0');
        chunk += `${uuidv7()}\t${created}\t${r.record.search_text.replace(/[\\\t\n]/g, ' ')}\n`;
        rows++;
        if (chunk.length > 1 << 20) {
          if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
          chunk = '';
        }
      }
      out.write(chunk);
    }
    await new Promise((resolve) => out.end(resolve));
    fs.renameSync(`${tsv}.part`, tsv);
    console.log(JSON.stringify({ rows }));
  });
}

// 2. ClickHouse (chdb): MergeTree ordered by (created_at, id), text index on search_text.
const ch = new Session(path.join(workDir, 'chdb'));
const chRows = () => Number(ch.query('select count() from leak_records', 'CSV').trim());
ch.query(`create table if not exists leak_records (id UUID, created_at DateTime64(6, 'UTC'), search_text String,
  index words search_text type text(tokenizer = 'splitByNonAlpha')) engine = MergeTree order by (created_at, id)`);
if (chRows() === 0) {
  await timed('chdb: insert from corpus.tsv (index built with the parts)', () =>
    ch.queryAsync(`insert into leak_records select * from file('${tsv}', 'TSV', 'id UUID, created_at DateTime64(6, \\'UTC\\'), search_text String')`),
  );
  await timed('chdb: optimize final (one part)', () => ch.queryAsync('optimize table leak_records final'));
}
const chDisk = ch.query(`select sum(bytes_on_disk) from system.parts where table = 'leak_records' and active`, 'CSV').trim();

// 3. PostgreSQL: the same rows, GIN on the expression threatmon indexes, read with threatmon's session
// settings. No index on created_at: with one, the planner walks it backwards testing every row's
// words for `count(*) over ()` (all 10 million: minutes), a plan threatmon's own statement avoids.
const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query('create table if not exists ft_bare (id uuid not null, created_at timestamptz not null, search_text text not null)');
if (Number((await client.query('select count(*) as n from ft_bare')).rows[0].n) === 0) {
  // The rows' times are UTC.
  await client.query("set timezone = 'UTC'");
  await timed('postgres: COPY corpus.tsv', () => pipeline(fs.createReadStream(tsv), client.query(copyFrom('copy ft_bare from stdin'))));
  await client.query("set maintenance_work_mem = '512MB'");
  await timed('postgres: GIN index', () => client.query("create index ft_bare_words on ft_bare using gin (to_tsvector('simple'::regconfig, search_text))"));
  await client.query('vacuum analyze ft_bare');
}
const pgDisk = (await client.query("select pg_total_relation_size('ft_bare') as n")).rows[0].n;
console.log(JSON.stringify({ rows: chRows(), chdb_bytes: Number(chDisk), postgres_bytes: Number(pgDisk) }));

// 4. The searches: newest page of 50 and the count, the same in both.
const searches = [
  ['full text `jennifer smith`', { pg: "to_tsvector('simple', search_text) @@ to_tsquery('simple', 'jennifer & smith')", ch: "hasAllTokens(search_text, ['jennifer', 'smith'])" }],
  [
    'phrase `"jennifer smith"`',
    {
      pg: "to_tsvector('simple', search_text) @@ to_tsquery('simple', 'jennifer & smith') and ' ' || search_text || ' ' like '% jennifer smith %'",
      ch: "hasAllTokens(search_text, ['jennifer', 'smith']) and position(concat(' ', search_text, ' '), ' jennifer smith ') > 0",
    },
  ],
  [
    'prefix `robins* jam*`',
    {
      pg: "to_tsvector('simple', search_text) @@ to_tsquery('simple', 'robins:* & jam:*')",
      ch: "arrayExists(w -> startsWith(w, 'robins'), splitByChar(' ', search_text)) and arrayExists(w -> startsWith(w, 'jam'), splitByChar(' ', search_text))",
    },
  ],
  ['one common word `robinson`', { pg: "to_tsvector('simple', search_text) @@ to_tsquery('simple', 'robinson')", ch: "hasToken(search_text, 'robinson')" }],
];
const pool = new pg.Pool({ connectionString: url, max: connections, options: '-c jit=off -c work_mem=32MB -c max_parallel_workers_per_gather=0' });
const engines = {
  postgres: async (where) => {
    const { rows } = await pool.query(`select id, count(*) over () as n from ft_bare where ${where} order by created_at desc, id desc limit 50`);
    return { ids: rows.map((r) => r.id), count: Number(rows[0]?.n ?? 0) };
  },
  chdb: async (where) => {
    const [page, count] = await Promise.all([
      ch.queryAsync(`select toString(id) as id from leak_records where ${where} order by created_at desc, id desc limit 50`, { format: 'JSONCompactColumns' }),
      ch.queryAsync(`select count() from leak_records where ${where}`, { format: 'CSV' }),
    ]);
    return { ids: page.json()[0] ?? [], count: Number(count.text().trim()) };
  },
};


for (const [kind, where] of searches) {
  const a = await engines.postgres(where.pg);
  const b = await engines.chdb(where.ch);
  const one = {};
  for (const [name, run] of Object.entries(engines)) {
    const t = process.hrtime.bigint();
    await run(where[name === 'postgres' ? 'pg' : 'ch']);
    one[name] = Math.round(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const figures = {};
  for (const [name, run] of Object.entries(engines)) figures[name] = await closedLoop(() => run(where[name === 'postgres' ? 'pg' : 'ch']), { connections, seconds });
  console.log(JSON.stringify({ kind, same_page: JSON.stringify(a.ids) === JSON.stringify(b.ids), counts: [a.count, b.count], one_at_a_time_ms: one, ...figures }));
}
await pool.end();
await client.end();
ch.close();
