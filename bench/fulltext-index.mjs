/**
 * Full text at scale, index against index: the newest page (50) of a full-text, phrase and
 * prefix search read through today's GIN index (`to_tsvector('simple', search_text)`, the rows'
 * order sorted after) and through a RUM index of the same words that keeps positions and each
 * record's created_at (`tsv rum_tsvector_addon_ops, created_at`, ordered in the index), each at
 * 16 connections for BENCH_DURATION seconds, on a database that has both (see docs/SCALING.md).
 *   node bench/fulltext-index.mjs postgres://.../c10m
 */
import pg from 'pg';
import { closedLoop } from './closed-loop.mjs';

const url = process.argv[2];
const seconds = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_SEARCH_CONNECTIONS ?? 16);
const searches = [
  ['full text', "to_tsquery('simple', 'jennifer & smith')"],
  ['phrase', "phraseto_tsquery('simple', 'jennifer smith')"],
  ['prefix', "to_tsquery('simple', 'robins:* & jam:*')"],
  ['one common word', "to_tsquery('simple', 'robinson')"],
];
const statements = {
  gin: (q) => `select id, created_at from leak_records where to_tsvector('simple'::regconfig, search_text) @@ ${q} order by created_at desc, id desc limit 50`,
  rum: (q) => `select id, created_at from leak_records where tsv @@ ${q} order by created_at <=| '2262-01-01'::timestamptz limit 50`,
};

async function measure(sql) {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  try {
    return await closedLoop(() => pool.query(sql), { connections, seconds });
  } finally {
    await pool.end();
  }
}

const client = new pg.Client({ connectionString: url });
await client.connect();
for (const [kind, q] of searches) {
  // The same page both ways: the same ids in the same order (ties on created_at aside).
  const a = (await client.query(statements.gin(q))).rows.map((r) => r.created_at.toISOString());
  const b = (await client.query(statements.rum(q))).rows.map((r) => r.created_at.toISOString());
  const same = JSON.stringify(a) === JSON.stringify(b);
  const plan = (await client.query(`explain ${statements.rum(q)}`)).rows.map((r) => r['QUERY PLAN']).join(' | ');
  const gin = await measure(statements.gin(q));
  const rum = await measure(statements.rum(q));
  console.log(JSON.stringify({ kind, same_dates: same, gin, rum, rum_plan: plan.slice(0, 160) }));
}
await client.end();
