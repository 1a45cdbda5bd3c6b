import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { hasRole, type Principal, requireRole } from './principal.js';
import { conflict, forbidden, notFound, validation } from '../../http/errors.js';
import type { AuditLog } from '../audit/index.js';
import { diff } from '../audit/index.js';
import { hashPassword, type PasswordPolicy } from './passwords.js';
import { ROLE_RANK, type Role } from '../../domain/roles.js';
import { toUser, type User, type UsersRepository } from './users.repository.js';
import { userListing } from './users.lists.js';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { UserOut } from './users.schemas.js';
import { SessionsRepository } from './sessions.repository.js';
import { presentUser } from './identity.presenters.js';

export interface NewUser {
  username: string;
  email: string;
  password: string;
  role: Role;
  isStaff?: boolean;
}

export class UsersService {
  private readonly sessions = new SessionsRepository();

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'principals'>,
    private readonly users: UsersRepository,
    private readonly audit: AuditLog,
    private readonly policy: PasswordPolicy,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  /** Validates and inserts a user in `db` (the caller's transaction); used by the API, the CLI and bootstrap. */
  async insertUser(db: Kysely<DB>, orgId: string, input: NewUser, fieldPrefix = ''): Promise<User> {
    const errors = await this.policy.check(input.password, `${fieldPrefix}password`, db, { username: input.username });
    if (errors.length) throw validation(errors);
    if (await this.users.usernameTaken(db, input.username)) {
      throw conflict(`A user named "${input.username}" already exists.`, 'duplicate');
    }
    const now = this.deps.clock().toISOString();
    const row = {
      id: this.deps.newId(),
      organization_id: orgId,
      username: input.username,
      email: input.email.toLowerCase(),
      password_hash: await hashPassword(input.password),
      role: input.role,
      is_active: true,
      is_staff: input.isStaff ?? false,
      created_at: now,
      updated_at: now,
      last_login_at: null,
    };
    await this.users.insert(db, row);
    return { ...row, version: 1 };
  }

  async create(p: Principal, input: NewUser, ip: string): Promise<User> {
    // Nobody grants a role above their own.
    if (ROLE_RANK[input.role] > ROLE_RANK[p.role]) throw forbidden(`Only an ${input.role} can create an ${input.role}.`);
    return this.db.transaction().execute(async (trx) => {
      const user = await this.insertUser(trx, p.organization.id, { ...input, isStaff: false });
      await this.audit.record(trx, {
        organizationId: p.organization.id,
        actorId: p.user.id,
        action: 'user.created',
        targetType: 'user',
        targetId: user.id,
        ip,
        changes: { username: user.username, email: user.email, role: user.role },
      });
      return user;
    });
  }

  async get(p: Principal, id: string): Promise<User> {
    const user = await this.users.findInOrg(this.db, p.organization.id, id);
    if (!user) throw notFound();
    return user;
  }

  async update(
    p: Principal,
    id: string,
    changes: { role?: Role; email?: string; is_active?: boolean },
    ip: string,
    assertVersion: (version: number) => void,
  ): Promise<User> {
    const updated = await this.db.transaction().execute(async (trx) => {
      const user = await this.users.findInOrg(trx, p.organization.id, id);
      if (!user) throw notFound();
      assertVersion(user.version);
      const next = { ...changes, email: changes.email?.toLowerCase() };
      const delta = diff(user, next);
      if (Object.keys(delta).length === 0) return user;
      this.assertMayManage(p, user, changes.role);
      const demoted = changes.role !== undefined && changes.role !== 'owner';
      const deactivated = changes.is_active === false;
      if (user.role === 'owner' && (demoted || deactivated) && (await this.users.otherActiveOwners(trx, p.organization.id, id)) === 0) {
        throw conflict('The last owner of an organization cannot be demoted or deactivated.');
      }
      await this.users.update(trx, id, { ...next, updated_at: this.deps.clock().toISOString() });
      if (deactivated) await this.revokeAllRefresh(trx, id);
      await this.audit.record(trx, {
        organizationId: p.organization.id,
        actorId: p.user.id,
        action: deactivated ? 'user.deactivated' : 'user.updated',
        targetType: 'user',
        targetId: id,
        ip,
        changes: delta,
      });
      const after = await this.users.findById(trx, id);
      if (!after) throw notFound();
      return after;
    });
    // Committed: no API process may go on answering with the user as it was (role, active).
    await this.deps.principals.changed();
    return updated;
  }

  async remove(p: Principal, id: string, ip: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const user = await this.users.findInOrg(trx, p.organization.id, id);
      if (!user) throw notFound();
      this.assertMayManage(p, user);
      if (user.role === 'owner' && (await this.users.otherActiveOwners(trx, p.organization.id, id)) === 0) {
        throw conflict('The last owner of an organization cannot be removed.');
      }
      await this.users.delete(trx, id);
      await this.audit.record(trx, {
        organizationId: p.organization.id,
        actorId: p.user.id,
        action: 'user.deleted',
        targetType: 'user',
        targetId: id,
        ip,
        changes: { username: user.username, role: user.role },
      });
    });
    await this.deps.principals.changed();
  }

  /** An admin manages analysts and viewers and other admins; only an owner touches owners or grants owner. */
  private assertMayManage(p: Principal, target: User, newRole?: Role) {
    requireRole(p, 'admin');
    const touchesOwner = target.role === 'owner' || newRole === 'owner';
    if (touchesOwner && !hasRole(p, 'owner')) throw forbidden('Only an owner can change an owner or grant the owner role.');
  }

  /** The organization's users, a page of them. */
  list(p: Principal, params: ListParams): Promise<ListResult<UserOut>> {
    const qb = userListing.filter(this.users.selectInOrg(this.db, p.organization.id), params, { dialect: this.deps.database.dialect });
    return userListing.page(qb, params, (row: Parameters<typeof toUser>[0]) => presentUser(toUser(row)));
  }

  /** Whether any account (of any organization) has this login name, case aside. */
  usernameTaken(db: Kysely<DB>, username: string): Promise<boolean> {
    return this.users.usernameTaken(db, username);
  }

  /** Ends every session of the user (see SessionsRepository). */
  async revokeAllRefresh(db: Kysely<DB>, userId: string) {
    await this.sessions.revokeUser(db, userId, this.deps.clock().toISOString());
  }
}
