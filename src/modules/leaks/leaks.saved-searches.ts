import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { notFound } from '../../http/errors.js';
import type { ListParams } from '../../db/listing.js';
import { type AuditLog, diff } from '../audit/index.js';
import type { Principal } from '../identity/index.js';
import type { LeaksRepository, SavedSearchRow } from './leaks.repository.js';
import type { ListResult } from '../../db/listing.js';
import { parseLeakSearch, savedSearchListing } from './leaks.lists.js';
import { presentSaved } from './leaks.presenters.js';

/** Saved searches: a search's query kept per organization, validated as a search, run on demand. */
export class SavedSearches {
  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId'>,
    private readonly repo: LeaksRepository,
    /** Runs a search for an organization (on a read replica when there is one: see LeaksService.search). */
    private readonly searches: { search(params: ListParams, orgId?: string): Promise<ListResult<string>> },
    private readonly audit: AuditLog,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
  }


  /** Saved queries must be runnable: the same validation as a search. */
  private validateSaved(query: Record<string, unknown>) {
    parseLeakSearch(query);
  }

  listSaved(p: Principal, params: ListParams) {
    const qb = savedSearchListing.filter(this.repo.selectSaved(p.organization.id), params, { dialect: this.deps.database.dialect });
    return savedSearchListing.page(qb, params, (r: SavedSearchRow) => presentSaved(r));
  }

  async getSaved(p: Principal, id: string, db: Kysely<DB> = this.db) {
    const row = await this.repo.findSaved(db, p.organization.id, id);
    if (!row) throw notFound('No such saved search.');
    return row;
  }

  async createSaved(actor: { p: Principal; ip: string }, body: { name: string; query: Record<string, unknown> }) {
    this.validateSaved(body.query);
    return this.db.transaction().execute(async (trx) => {
      const at = this.now();
      const row = {
        id: this.deps.newId(),
        organization_id: actor.p.organization.id,
        name: body.name,
        query: JSON.stringify(body.query),
        created_by: actor.p.user.id,
        created_at: at,
        updated_at: at,
        last_run_at: null,
        last_result_count: null,
      };
      await this.repo.insertSaved(trx, row);
      await this.audit.recordAs(trx, actor, { action: 'saved_search.created', targetType: 'saved_search', targetId: row.id, changes: { name: row.name, query: body.query } });
      return this.getSaved(actor.p, row.id, trx);
    });
  }

  async updateSaved(actor: { p: Principal; ip: string }, id: string, patch: { name?: string; query?: Record<string, unknown> }, assertVersion: (v: number) => void) {
    if (patch.query) this.validateSaved(patch.query);
    return this.db.transaction().execute(async (trx) => {
      const current = await this.getSaved(actor.p, id, trx);
      assertVersion(current.version);
      const changes = diff(presentSaved(current), patch);
      if (Object.keys(changes).length === 0) return current;
      await this.repo.updateSaved(
        trx,
        id,
        { ...(patch.name !== undefined && { name: patch.name }), ...(patch.query !== undefined && { query: JSON.stringify(patch.query) }) },
        this.now(),
      );
      await this.audit.recordAs(trx, actor, { action: 'saved_search.updated', targetType: 'saved_search', targetId: id, changes });
      return this.getSaved(actor.p, id, trx);
    });
  }

  async deleteSaved(actor: { p: Principal; ip: string }, id: string) {
    await this.db.transaction().execute(async (trx) => {
      const current = await this.getSaved(actor.p, id, trx);
      await this.repo.deleteSaved(trx, id);
      await this.audit.recordAs(trx, actor, { action: 'saved_search.deleted', targetType: 'saved_search', targetId: id, changes: { name: current.name } });
    });
  }

  /** Runs a saved search (page and page_size from the request) and records when and how many. */
  async runSaved(p: Principal, id: string, paging: { page?: number; page_size?: number }) {
    const saved = await this.getSaved(p, id);
    const page = await this.searches.search(parseLeakSearch({ ...(JSON.parse(saved.query) as Record<string, unknown>), ...paging }), p.organization.id);
    await this.repo.markSavedRun(id, this.now(), page.count);
    return page;
  }
}
