import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { DB } from '../../db/schema.js';
import type { AuditLogTable } from './audit.tables.js';
import { auditListing } from './audit.lists.js';
import type { AuditEntryOut } from './audit.schemas.js';

export interface AuditEntry {
  organizationId: string | null;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  ip: string | null;
  changes?: Record<string, unknown>;
}

/** Who did what. Called with the transaction of the change itself, so both commit or neither. */
export class AuditLog {
  /** A page of the organization's entries. */
  list(database: Pick<Database, 'db' | 'dialect'>, orgId: string, params: ListParams): Promise<ListResult<AuditEntryOut>> {
    const qb = auditListing.filter(database.db.selectFrom('audit_log').selectAll().where('organization_id', '=', orgId), params, { dialect: database.dialect });
    return auditListing.page(qb, params, (r: Selectable<AuditLogTable>): AuditEntryOut => ({
      id: r.id,
      actor: r.actor_id ?? null,
      action: r.action,
      target_type: r.target_type,
      target_id: r.target_id ?? null,
      ip: r.ip ?? null,
      created_at: r.created_at,
      changes: JSON.parse(r.changes),
    }));
  }

  constructor(
    private readonly clock: () => Date,
    private readonly newId: () => string,
  ) {}

  /** Records what `actor` did, in its organization. */
  recordAs(db: Kysely<DB>, actor: Actor, entry: Pick<AuditEntry, 'action' | 'targetType' | 'targetId' | 'changes'>): Promise<void> {
    return this.record(db, { organizationId: actor.p?.organization.id ?? null, actorId: actor.p?.user.id ?? null, ip: actor.ip, ...entry });
  }

  async record(db: Kysely<DB>, entry: AuditEntry): Promise<void> {
    await db
      .insertInto('audit_log')
      .values({
        id: this.newId(),
        organization_id: entry.organizationId,
        actor_id: entry.actorId,
        action: entry.action,
        target_type: entry.targetType,
        target_id: entry.targetId,
        ip: entry.ip,
        changes: JSON.stringify(entry.changes ?? {}),
        created_at: this.clock().toISOString(),
      })
      .execute();
  }
}

/** Who acts: the caller (null for the CLI and the system) and the client address. */
export interface Actor {
  p: { organization: { id: string }; user: { id: string } } | null;
  ip: string | null;
}

/** {field: {from, to}} for the fields whose value differs. */
export function diff<T extends object>(before: T, after: { readonly [K in keyof T]?: unknown }, redact: ReadonlyArray<keyof T & string> = []) {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [k, to] of Object.entries(after) as Array<[keyof T & string, unknown]>) {
    if (to === undefined) continue;
    const from = before[k];
    if (JSON.stringify(from) !== JSON.stringify(to)) {
      changes[k] = redact.includes(k) ? { from: '[redacted]', to: '[redacted]' } : { from, to };
    }
  }
  return changes;
}
