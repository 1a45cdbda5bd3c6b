// Creates or drops the throw-away PostgreSQL database of a CI run: node .ci/pgdb.mjs create|drop NAME
import pg from 'pg';

const [action, name] = process.argv.slice(2);
if (!['create', 'drop'].includes(action) || !/^[a-z0-9_]+$/.test(name ?? '')) {
  console.error('usage: node .ci/pgdb.mjs create|drop NAME');
  process.exit(2);
}
const client = new pg.Client({ connectionString: process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
await client.connect();
if (action === 'create') await client.query(`create database ${name}`);
else await client.query(`drop database if exists ${name} with (force)`);
await client.end();
