import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';

import type { CollectionKind } from './taxii.schemas.js';

/** One version of a STIX object as a collection keeps it. */
export interface ObjectVersion {
  orgId: string;
  collection: CollectionKind;
  stixId: string;
  type: string;
  /** modified (or created); '' for an object without either, whose version is its date_added. */
  version: string;
  object: Record<string, unknown>;
}

export interface StoredObject {
  stix_id: string;
  type: string;
  version: string;
  added_us: number;
  object: string;
}

/** What a read asks of a collection (TAXII 2.1 section 3.5's filters, already parsed). */
export interface ObjectQuery {
  collection: CollectionKind;
  /** Only objects added after this (microseconds since the epoch, exclusive). */
  afterUs?: number;
  ids?: string[];
  types?: string[];
  /** first, last, all and exact versions; empty means last. */
  versions: string[];
  limit: number;
  /** Leave the object text out (manifest and versions need only the row). */
  withoutObject?: boolean;
}

// A stamping transaction gives dates to at most this many rows, so that a read waits a bounded time.
const STAMP_BATCH = 10_000;

/** Every query of the TAXII module. */
export class TaxiiRepository {
  constructor(private readonly dialect: 'sqlite' | 'postgres') {}

  collections(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('taxii_collections').select(['id', 'kind', 'created_at']).where('organization_id', '=', orgId).execute();
  }

  async createCollections(db: Kysely<DB>, rows: Array<{ id: string; organization_id: string; kind: string; created_at: string }>): Promise<void> {
    await db.insertInto('taxii_collections').values(rows).onConflict((oc) => oc.columns(['organization_id', 'kind']).doNothing()).execute();
  }

  /** The latest version of each of these objects, where one exists, with its text (unless `withObject` is false). */
  async latestObjects(db: Kysely<DB>, orgId: string, collection: CollectionKind, stixIds: string[], withObject = true): Promise<Map<string, { version: string; object?: string }>> {
    const out = new Map<string, { version: string; object?: string }>();
    for (let i = 0; i < stixIds.length; i += 500) {
      const rows = await db
        .selectFrom('taxii_objects')
        .select(['stix_id', 'version'])
        .$if(withObject, (b) => b.select('object'))
        .where('organization_id', '=', orgId)
        .where('collection', '=', collection)
        .where('stix_id', 'in', stixIds.slice(i, i + 500))
        .where('superseded', '=', false)
        .execute();
      for (const r of rows) if ((out.get(r.stix_id)?.version ?? '') <= r.version) out.set(r.stix_id, r as { version: string; object?: string });
    }
    return out;
  }

  /**
   * Adds versions (unstamped), in the order given. `replacing`: the `<org> <collection> <stix id>`
   * of objects that had a version before, which stops being the latest. A version already kept
   * (same object, same version) is not added twice.
   */
  async addVersions(db: Kysely<DB>, versions: ObjectVersion[], replacing: ReadonlySet<string>): Promise<void> {
    const keyOf = (v: ObjectVersion) => `${v.orgId} ${v.collection} ${v.stixId}`;
    const replaced = new Map<string, { orgId: string; collection: CollectionKind; ids: Set<string> }>();
    for (const v of versions) {
      if (!replacing.has(keyOf(v))) continue;
      const group = `${v.orgId} ${v.collection}`;
      if (!replaced.has(group)) replaced.set(group, { orgId: v.orgId, collection: v.collection, ids: new Set() });
      replaced.get(group)!.ids.add(v.stixId);
    }
    for (const { orgId, collection, ids } of replaced.values()) {
      const list = [...ids];
      for (let i = 0; i < list.length; i += 500) {
        await db
          .updateTable('taxii_objects')
          .set({ superseded: true })
          .where('organization_id', '=', orgId)
          .where('collection', '=', collection)
          .where('stix_id', 'in', list.slice(i, i + 500))
          .where('superseded', '=', false)
          .execute();
      }
    }
    const rows = versions.map((v) => ({
      organization_id: v.orgId,
      collection: v.collection,
      stix_id: v.stixId,
      type: v.type,
      version: v.version,
      added_us: null,
      first: !replacing.has(keyOf(v)),
      superseded: false,
      object: JSON.stringify(v.object),
    }));
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('taxii_objects')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['organization_id', 'collection', 'stix_id', 'version']).doNothing())
        .execute();
    }
  }

  /** The organizations with undated versions. */
  async pendingOrganizations(db: Kysely<DB>): Promise<string[]> {
    const rows = await db.selectFrom('taxii_objects').select('organization_id').distinct().where('added_us', 'is', null).execute();
    return rows.map((r) => r.organization_id);
  }

  async hasPending(db: Kysely<DB>, orgId: string): Promise<boolean> {
    const row = await db.selectFrom('taxii_objects').select('pk').where('organization_id', '=', orgId).where('added_us', 'is', null).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Dates the organization's committed, undated versions in the order they were written: each gets
   * a microsecond after the last date given (or now, if later). Run in a transaction: on PostgreSQL
   * it takes the organization's lock first, so dates are given in commit order and only grow.
   * Returns how many were dated.
   */
  async stamp(trx: Kysely<DB>, orgId: string, nowUs: number): Promise<number> {
    if (this.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`taxii:${orgId}`}))`.execute(trx);
    const last = await trx.selectFrom('taxii_objects').select((eb) => eb.fn.max('added_us').as('last')).where('organization_id', '=', orgId).executeTakeFirst();
    const base = Math.max(nowUs, Number(last?.last ?? 0) + 1);
    const result = await sql`
      update taxii_objects set added_us = ${base} + s.rn - 1
      from (select pk, row_number() over (order by pk) as rn from taxii_objects
            where organization_id = ${orgId} and added_us is null order by pk limit ${STAMP_BATCH}) as s
      where taxii_objects.pk = s.pk`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  }

  /** One page (limit + 1 rows, to tell whether there is more) of a collection, in date_added order. */
  page(db: Kysely<DB>, orgId: string, q: ObjectQuery): Promise<StoredObject[]> {
    let qb = db
      .selectFrom('taxii_objects')
      .select(['stix_id', 'type', 'version', 'added_us'])
      .$if(!q.withoutObject, (b) => b.select('object'))
      .where('organization_id', '=', orgId)
      .where('collection', '=', q.collection)
      .where('added_us', 'is not', null);
    if (q.afterUs !== undefined) qb = qb.where('added_us', '>', q.afterUs);
    if (q.ids?.length) qb = qb.where('stix_id', 'in', q.ids);
    if (q.types?.length) qb = qb.where('type', 'in', q.types);
    const versions = q.versions.length ? q.versions : ['last'];
    if (!versions.includes('all')) {
      qb = qb.where((eb) =>
        eb.or([
          ...(versions.includes('last') ? [eb('superseded', '=', false)] : []),
          ...(versions.includes('first') ? [eb('first', '=', true)] : []),
          ...versions.filter((v) => v !== 'first' && v !== 'last').map((v) => eb('version', '=', v)),
        ]),
      );
    }
    return qb.orderBy('added_us').limit(q.limit + 1).execute() as Promise<StoredObject[]>;
  }

  async exists(db: Kysely<DB>, orgId: string, collection: CollectionKind, stixId: string): Promise<boolean> {
    const row = await db
      .selectFrom('taxii_objects')
      .select('pk')
      .where('organization_id', '=', orgId)
      .where('collection', '=', collection)
      .where('stix_id', '=', stixId)
      .where('added_us', 'is not', null)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }
}
