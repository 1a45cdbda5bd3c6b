import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

/**
 * Usernames are unique ignoring case (`Alice` and `alice` are one user), and login looks them up
 * that way, through a unique index on lower(username).
 *
 * Users whose names clash ignoring case before this migration all stay, with their data: the
 * oldest keeps its name, each later one is renamed to `<name>-<n>` (the lowest n free ignoring case)
 * and a `user.renamed` entry in its organization's audit log says from what to what, so an admin can
 * tell the user. Nothing else about them changes (password, role, tokens).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const users = (await db
    .selectFrom('users')
    .select(['id', 'organization_id', 'username'])
    .orderBy('created_at')
    .orderBy('id')
    .execute()) as Array<{ id: string; organization_id: string; username: string }>;
  const taken = new Set<string>();
  const clashing: typeof users = [];
  for (const u of users) {
    const key = u.username.toLowerCase();
    if (taken.has(key)) clashing.push(u);
    else taken.add(key);
  }
  const now = new Date().toISOString();
  for (const u of clashing) {
    let n = 2;
    while (taken.has(`${u.username}-${n}`.toLowerCase())) n++;
    const renamed = `${u.username}-${n}`;
    taken.add(renamed.toLowerCase());
    await db.updateTable('users').set({ username: renamed }).where('id', '=', u.id).execute();
    await db
      .insertInto('audit_log')
      .values({
        id: randomUUID(),
        organization_id: u.organization_id,
        actor_id: null,
        action: 'user.renamed',
        target_type: 'user',
        target_id: u.id,
        ip: null,
        changes: JSON.stringify({ username: { from: u.username, to: renamed }, reason: 'usernames are unique ignoring case' }),
        created_at: now,
      })
      .execute();
  }
  await sql`create unique index users_username_lower_idx on users (lower(username))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('users_username_lower_idx').execute();
}
