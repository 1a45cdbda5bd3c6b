import type { Plan } from '../../config.js';
import type { AppDeps } from '../../deps.js';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { type Principal, requireRole } from '../identity/index.js';
import { conflict, notFound } from '../../http/errors.js';
import { diff } from '../audit/index.js';
import type { AuditLog } from '../audit/index.js';
import type { User } from '../identity/index.js';
import type { NewUser, UsersService } from '../identity/index.js';
import type { OrganizationRow, OrganizationsRepository } from './organizations.repository.js';
import type { Organization } from './organizations.schemas.js';
import { organizationListing } from './organizations.lists.js';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { Hooks } from '../../runtime/hooks.js';
import type { AppHooks, UsageKey } from '../hooks.js';

export class OrganizationsService {
  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'counters' | 'principals'>,
    private readonly orgs: OrganizationsRepository,
    private readonly users: UsersService,
    private readonly audit: AuditLog,
    private readonly hooks: Hooks<Pick<AppHooks, 'organizations.usage'>>,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  present(row: OrganizationRow): Organization {
    return {
      id: row.id,
      name: row.name,
      plan: row.plan as Plan,
      rate_limit_per_minute: this.deps.config.rateLimits ? this.deps.config.planLimits[row.plan as Plan] : 0,
      created_at: row.created_at,
      member_count: row.member_count,
    };
  }

  /** Every organization with its member count, a page of them (staff). */
  list(params: ListParams): Promise<ListResult<Organization>> {
    const qb = organizationListing.filter(this.orgs.select(this.db), params, { dialect: this.deps.database.dialect });
    return organizationListing.page(qb, params, (row: OrganizationRow) => this.present({ ...row, member_count: Number(row.member_count ?? 0) }));
  }

  async get(orgId: string): Promise<OrganizationRow> {
    const row = await this.orgs.findById(this.db, orgId);
    if (!row) throw notFound();
    return row;
  }

  /** Id, name and creation of these organizations, in `db` (the caller's transaction, when it has one). */
  names(ids: readonly string[], db: Kysely<DB> = this.db) {
    return ids.length ? this.orgs.names(db, ids) : Promise.resolve([]);
  }

  async update(p: Principal, changes: { name?: string; plan?: Plan }, ip: string, assertVersion: (v: number) => void) {
    const updated = await this.db.transaction().execute(async (trx) => {
      const org = await this.orgs.findById(trx, p.organization.id);
      if (!org) throw notFound();
      assertVersion(org.version);
      const delta = diff(org, changes);
      if (delta.name) requireRole(p, 'admin');
      if (delta.plan) requireRole(p, 'owner');
      if (Object.keys(delta).length === 0) return org;
      if (delta.name && changes.name && (await this.orgs.findByName(trx, changes.name))) {
        throw conflict(`An organization named "${changes.name}" already exists.`, 'duplicate');
      }
      await this.orgs.update(trx, org.id, { ...changes, updated_at: this.deps.clock().toISOString() });
      await this.audit.record(trx, {
        organizationId: org.id,
        actorId: p.user.id,
        action: delta.plan ? 'organization.plan_changed' : 'organization.updated',
        targetType: 'organization',
        targetId: org.id,
        ip,
        changes: delta,
      });
      return (await this.orgs.findById(trx, org.id)) as OrganizationRow;
    });
    // Committed: every API process forgets the principals that carry the old plan (the rate limit) and name.
    await this.deps.principals.changed();
    return updated;
  }

  /** Whether the database holds any organization yet. */
  any(): Promise<boolean> {
    return this.orgs.any(this.db);
  }

  /** The organization of that name, if there is one. */
  findByName(name: string) {
    return this.orgs.findByName(this.db, name);
  }

  async usage(p: Principal) {
    const { config, counters } = this.deps;
    const limit = config.rateLimits ? config.planLimits[p.organization.plan] : 0;
    const window = await counters.peek(`rl:${p.organization.id}`);
    // Each figure belongs to the module that keeps it (organizations.usage); none of them: 0.
    const count = async (key: UsageKey) => {
      for (const figure of this.hooks.of('organizations.usage')) {
        const n = await figure(this.db, p.organization.id, key);
        if (n !== undefined) return n;
      }
      return 0;
    };
    return {
      plan: p.organization.plan,
      limit,
      remaining: Math.max(0, limit - window.count),
      reset_seconds: Math.ceil(window.resetMs / 1000),
      monitors: await count('monitors'),
      tracking_tokens: await count('tracking_tokens'),
      incidents_open: await count('incidents_open'),
    };
  }

  /** A new organization and its first owner, in one transaction (API, CLI and first start); the CLI's `create-org` makes one without. */
  async create<O extends NewUser | undefined>(
    input: { name: string; plan: Plan; owner: O },
    actor: { id: string | null; ip: string | null } = { id: null, ip: null },
  ): Promise<{ org: OrganizationRow; owner: O extends NewUser ? User : undefined }> {
    return this.db.transaction().execute(async (trx) => {
      if (await this.orgs.findByName(trx, input.name)) {
        throw conflict(`An organization named "${input.name}" already exists.`, 'duplicate');
      }
      const now = this.deps.clock().toISOString();
      const id = this.deps.newId();
      await this.orgs.insert(trx, { id, name: input.name, plan: input.plan, created_at: now, updated_at: now });
      const owner = input.owner ? await this.users.insertUser(trx, id, input.owner, 'owner.') : undefined;
      await this.audit.record(trx, {
        organizationId: id,
        actorId: actor.id,
        action: 'organization.created',
        targetType: 'organization',
        targetId: id,
        ip: actor.ip,
        changes: { name: input.name, plan: input.plan, ...(owner && { owner: owner.username }) },
      });
      return { org: (await this.orgs.findById(trx, id)) as OrganizationRow, owner: owner as O extends NewUser ? User : undefined };
    });
  }

}
