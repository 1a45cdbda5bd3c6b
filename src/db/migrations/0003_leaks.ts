import { type Kysely, sql } from 'kysely';
import { boolean, isPostgres, timestamp, uuid } from './dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  const bool = boolean(db);
  const pg = isPostgres(db);
  // Byte-order text for keys searched by range (reversed domains, IP keys, SHA-1 prefixes):
  // a locale collation could put "com.example/" before "com.example.mail.".
  const bytewise = pg ? sql`text collate "C"` : sql`text`;

  await db.schema
    .createTable('leak_sources')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('breach_date', 'text')
    .addColumn('discovered_at', ts)
    .addColumn('data_classes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('is_verified', bool, (c) => c.notNull().defaultTo(pg ? sql`false` : sql`0`))
    .addColumn('record_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('leak_records')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('source_id', id, (c) => c.notNull().references('leak_sources.id').onDelete('cascade'))
    .addColumn('email', 'text')
    .addColumn('username', 'text')
    .addColumn('username_lower', 'text')
    .addColumn('domain', 'text')
    // Labels reversed with a trailing dot ("com.example.mail."): a domain and its subdomains form one index range.
    .addColumn('domain_rev', bytewise)
    .addColumn('ip', 'text')
    // 32 hex digits of the 16-byte address (IPv4 as IPv4-mapped IPv6): CIDR ranges become index ranges.
    .addColumn('ip_key', bytewise)
    .addColumn('phone', 'text')
    .addColumn('full_name', 'text')
    .addColumn('password_sha1', bytewise)
    .addColumn('password_masked', 'text')
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('leaked_at', ts)
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    // Lower-cased words of every text field, for full-text search.
    .addColumn('search_text', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addUniqueConstraint('leak_records_source_fingerprint_key', ['source_id', 'fingerprint'])
    .execute();
  // Each search index ends with (created_at, id): counting and picking a page's ids read the index
  // alone, even when a domain or a CIDR range matches a large share of the corpus.
  for (const [name, cols] of [
    ['leak_records_email_idx', ['email', 'created_at', 'id']],
    ['leak_records_username_idx', ['username_lower', 'created_at', 'id']],
    ['leak_records_phone_idx', ['phone', 'created_at', 'id']],
    ['leak_records_domain_rev_idx', ['domain_rev', 'created_at', 'id']],
    ['leak_records_ip_key_idx', ['ip_key', 'created_at', 'id']],
    ['leak_records_sha1_idx', ['password_sha1']],
    // `source=` pages in created_at order straight off this index. No index on created_at alone:
    // every search has a selective criterion, and each index costs every ingested record.
    ['leak_records_source_created_idx', ['source_id', 'created_at', 'id']],
  ] as const) {
    await db.schema.createIndex(name).on('leak_records').columns([...cols]).execute();
  }

  if (pg) {
    await sql`alter table leak_records add column search_vector tsvector generated always as (to_tsvector('simple', search_text)) stored`.execute(db);
    await sql`create index leak_records_search_idx on leak_records using gin (search_vector)`.execute(db);
  } else {
    await sql`create virtual table leak_records_fts using fts5(search_text, content='leak_records', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`.execute(db);
    await sql`create trigger leak_records_fts_insert after insert on leak_records begin
      insert into leak_records_fts(rowid, search_text) values (new.rowid, new.search_text); end`.execute(db);
    await sql`create trigger leak_records_fts_delete after delete on leak_records begin
      insert into leak_records_fts(leak_records_fts, rowid, search_text) values ('delete', old.rowid, old.search_text); end`.execute(db);
  }

  // Corpus statistics kept on ingest and delete: `total`, `with_password`, `class:<data class>`, `month:YYYY-MM`.
  await db.schema
    .createTable('leak_counters')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('n', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('saved_searches')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('created_by', id)
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('last_run_at', ts)
    .addColumn('last_result_count', 'integer')
    .execute();
  await db.schema.createIndex('saved_searches_org_created_idx').on('saved_searches').columns(['organization_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) await sql`drop table if exists leak_records_fts`.execute(db);
  for (const t of ['saved_searches', 'leak_counters', 'leak_records', 'leak_sources']) await db.schema.dropTable(t).execute();
}
