import { type Kysely, sql } from 'kysely';
import { boolean, isPostgres, timestamp, uuid } from './dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  const bool = boolean(db);
  const falsy = isPostgres(db) ? sql`false` : sql`0`;
  const truthy = isPostgres(db) ? sql`true` : sql`1`;

  await db.schema
    .createTable('organizations')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('is_active', bool, (c) => c.notNull().defaultTo(truthy))
    .addColumn('is_staff', bool, (c) => c.notNull().defaultTo(falsy))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('last_login_at', ts)
    .execute();
  await db.schema.createIndex('users_org_created_idx').on('users').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('user_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('family_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('revoked_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('refresh_tokens_family_idx').on('refresh_tokens').column('family_id').execute();
  await db.schema.createIndex('refresh_tokens_user_idx').on('refresh_tokens').column('user_id').execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('actor_id', id)
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_org_created_idx').on('audit_log').columns(['organization_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['audit_log', 'refresh_tokens', 'users', 'organizations']) await db.schema.dropTable(t).execute();
}
