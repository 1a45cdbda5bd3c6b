import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp, type BuildOptions } from '../../src/app.js';
import { type Config, loadConfig, type Plan } from '../../src/config.js';
import { type Role, ROLES, type User } from '../../src/modules/identity/index.js';
import { ContractChecker } from './contract.js';

export const TEST_PG_URL = process.env.THREATMON_TEST_PG_URL;
export const TEST_REDIS_URL = process.env.THREATMON_TEST_REDIS_URL;
export const PASSWORD = 'correct horse battery staple';
export const JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256!!';

/** A clock tests move by hand: nothing sleeps. */
export class TestClock {
  constructor(private ms = Date.parse('2026-11-22T10:00:00.000Z')) {}
  now = () => new Date(this.ms);
  advance(seconds: number) {
    this.ms += seconds * 1000;
  }
}

const schemas: string[] = [];

/**
 * A fresh database for one app: in-memory SQLite, or (THREATMON_TEST_PG_URL set) a new schema in
 * the PostgreSQL test database, dropped by `dropTestSchemas`.
 */
export async function testDatabaseUrl(): Promise<string> {
  if (!TEST_PG_URL) return 'sqlite::memory:';
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  schemas.push(schema);
  const url = new URL(TEST_PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

export async function dropTestSchemas() {
  if (!TEST_PG_URL || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  for (const s of schemas.splice(0)) await client.query(`drop schema if exists ${s} cascade`);
  await client.end();
}

export interface TestOrg {
  id: string;
  name: string;
  owner: User;
}

/** An organization with one user of each role, and an access token for each. */
export interface TestTeam {
  org: TestOrg;
  members: Record<Role, User>;
  tokens: Record<Role, string>;
}

export class TestApp {
  constructor(
    readonly app: FastifyInstance,
    readonly clock: TestClock,
    readonly config: Config,
  ) {}

  get services() {
    return this.app.services;
  }

  get db() {
    return this.app.deps.database.db;
  }

  async createOrg(plan: Plan = 'enterprise', name = `org-${randomBytes(4).toString('hex')}`, staff = false): Promise<TestOrg> {
    const { org, owner } = await this.services.orgs.create({
      name,
      plan,
      owner: { username: `${name}-owner`, email: `owner@${name}.example`, password: PASSWORD, role: 'owner', isStaff: staff },
    });
    return { id: org.id, name: org.name, owner };
  }

  async createUser(org: TestOrg, role: Role, username = `${org.name}-${role}-${randomBytes(3).toString('hex')}`): Promise<User> {
    return this.db.transaction().execute((trx) =>
      this.services.users.insertUser(trx, org.id, { username, email: `${username}@example.com`, password: PASSWORD, role }),
    );
  }

  /** An organization with its owner and an admin, an analyst and a viewer named `<prefix>-<role>`. */
  async createTeam(plan: Plan = 'enterprise', name?: string, prefix = name ?? 'team'): Promise<TestTeam> {
    const org = await this.createOrg(plan, name);
    const members = { owner: org.owner } as Record<Role, User>;
    for (const role of ['admin', 'analyst', 'viewer'] as const) members[role] = await this.createUser(org, role, `${prefix}-${role}`);
    const tokens = {} as Record<Role, string>;
    for (const role of ROLES) tokens[role] = await this.token(members[role]);
    return { org, members, tokens };
  }

  /** A signed access token, without the cost of a login. */
  async token(user: User): Promise<string> {
    const { token } = await this.services.tokens.sign({ userId: user.id, orgId: user.organization_id, role: user.role }, 'access');
    return token;
  }

  async as(user: User, options: InjectOptions): Promise<LightMyRequestResponse> {
    return this.inject({ ...options, headers: { ...options.headers, authorization: `Bearer ${await this.token(user)}` } });
  }

  private contract: ContractChecker | undefined;

  /** The answer, held to the OpenAPI document first (see ContractChecker): a test fails on any answer it does not describe. */
  async inject(options: InjectOptions): Promise<LightMyRequestResponse> {
    const res = await this.app.inject(options);
    this.contract ??= new ContractChecker(this.app.swagger() as never);
    const method = String(options.method ?? 'GET').toUpperCase();
    const url = String(options.url ?? (options as { path?: string }).path ?? '/');
    const errors = this.contract.check(method, url, res);
    if (errors.length) throw new Error(`${method} ${url} answered ${res.statusCode} outside its OpenAPI document:\n  ${errors.join('\n  ')}\n  body: ${res.body.slice(0, 500)}`);
    return res;
  }

  close() {
    return this.app.close();
  }
}

export async function buildTestApp(
  env: Record<string, string> = {},
  options: BuildOptions = {},
  beforeReady?: (app: FastifyInstance) => void | Promise<void>,
): Promise<TestApp> {
  const clock = new TestClock();
  const config = loadConfig({
    THREATMON_DATABASE_URL: await testDatabaseUrl(),
    THREATMON_JWT_SECRET: JWT_SECRET,
    THREATMON_LOG_LEVEL: 'silent',
    ...env,
  });
  const app = await buildApp(config, { logger: false, clock: clock.now, ...options });
  await beforeReady?.(app);
  await app.ready();
  return new TestApp(app, clock, config);
}

export function json<T = any>(res: LightMyRequestResponse): T {
  return JSON.parse(res.body) as T;
}
