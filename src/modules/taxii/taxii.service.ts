import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppDeps } from '../../deps.js';
import type { DB } from '../../db/schema.js';
import { exposureObjects, type StixAlert } from '../../domain/stix-exposure.js';
import { marking, organizationIdentity, type StixIoc, stixIocObject } from '../../domain/stix.js';
import { type DomainEvent, readEvent } from '../events/index.js';
import type { RecordedEvent } from '../hooks.js';
import type { Principal } from '../identity/index.js';
import { type ObjectQuery, type ObjectVersion, type StoredObject, TaxiiRepository } from './taxii.repository.js';
import { COLLECTION_KINDS, type CollectionKind } from './taxii.schemas.js';

/** Organizations as the STIX objects name them. */
export type OrganizationsLookup = (db: Kysely<DB>, ids: string[]) => Promise<Array<{ id: string; name: string; created_at: string }>>;

/** A page of a collection: its rows and whether more follow. */
export interface CollectionPage {
  rows: StoredObject[];
  more: boolean;
}

const COLLECTION_TEXT: Record<CollectionKind, { title: string; description: string }> = {
  indicators: {
    title: 'Indicators',
    description: "Every IOC of the organization's incidents as a STIX indicator (a vulnerability for a CVE), one version per change; a deleted IOC is a revoked version.",
  },
  exposures: {
    title: 'Exposures',
    description: "Every monitoring alert as a sighting of the organization in a leak source, with the leaked account's observables (threatmon's STIX profile for leak exposures).",
  },
};

/** An event's STIX objects: those it shares with other events, and the one it makes a version of. */
interface EventObjects {
  e: DomainEvent;
  collection: CollectionKind;
  shared: Record<string, unknown>[];
  versioned: Record<string, unknown>;
}

/** An object of an organization's collection, as the versions kept are looked up by. */
const keyOf = (orgId: string, collection: CollectionKind, id: unknown) => `${orgId} ${collection} ${String(id)}`;

/** Whether two versions of an object say the same, their dates aside. */
function sameContent(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const { created: _c1, modified: _m1, ...restA } = a;
  const { created: _c2, modified: _m2, ...restB } = b;
  return JSON.stringify(restA) === JSON.stringify(restB);
}

/** One millisecond after a STIX timestamp: a version that must be later than the last one kept. */
const after = (ts: string) => new Date(Date.parse(ts) + 1).toISOString();

/**
 * TAXII 2.1's view of an organization: collections written from its domain events (in the
 * transaction of each change) and read in date_added order, dated when they become visible.
 */
export class TaxiiService {
  private readonly db: Kysely<DB>;

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock'>,
    private readonly repo: TaxiiRepository,
    private readonly organizations: OrganizationsLookup,
  ) {
    this.db = deps.database.db;
  }

  /**
   * The events.recorded hook: the STIX versions of the IOCs and alerts these events carry, for every
   * organization at once (an ingest batch raises alerts for many): one lookup of the organizations,
   * one of the versions that updates replace, and the rows in a few multi-row inserts.
   */
  async record(trx: Kysely<DB>, events: RecordedEvent[]): Promise<void> {
    const relevant = events.filter((e) => e.type.startsWith('ioc.') || e.type.startsWith('alert.')).map(readEvent);
    if (relevant.length === 0) return;
    const orgs = new Map((await this.organizations(trx, [...new Set(relevant.map((e) => e.organization_id))])).map((o) => [o.id, o]));
    // Each event's objects, built once: those it shares with others, and the one it versions.
    const built = relevant.flatMap((e): EventObjects[] => {
      const org = orgs.get(e.organization_id)!;
      if (e.type === 'ioc.created' || e.type === 'ioc.updated' || e.type === 'ioc.deleted') {
        const ioc: StixIoc = e.data;
        const creator = organizationIdentity(org, org.created_at);
        const object = stixIocObject(ioc, creator.id);
        if (!object) return [];
        return [{ e, collection: 'indicators', shared: [marking(ioc.tlp), creator], versioned: e.type === 'ioc.deleted' ? { ...object, revoked: true } : object }];
      }
      if (e.type !== 'alert.created' && e.type !== 'alert.updated') return [];
      const alert: StixAlert = e.data;
      const { shared, own } = exposureObjects(alert, org, alert.updated_at);
      // The alert's observed-data never changes: it is shared like the identities; its sighting is its versions.
      return [{ e, collection: 'exposures', shared: [...shared, ...own.filter((o) => o.type !== 'sighting')], versioned: own.find((o) => o.type === 'sighting')! }];
    });
    // The latest kept version of each object an update changes: its new version must come after it.
    const changing = built.filter(({ e }) => !e.type.endsWith('.created'));
    const kept = await this.latest(trx, changing.map((b) => ({ orgId: b.e.organization_id, collection: b.collection, id: b.versioned.id as string })), false);
    const latest = new Map([...kept].map(([key, v]) => [key, v.version]));
    const shared = await this.sharedVersions(trx, built);
    const own: ObjectVersion[] = [];
    const replacing = new Set<string>(shared.replacing);
    for (const { e, collection, versioned } of built) {
      const orgId = e.organization_id;
      const key = keyOf(orgId, collection, versioned.id);
      const previous = latest.get(key);
      let version = String(versioned.modified);
      if (previous !== undefined) {
        replacing.add(key);
        if (version <= previous) version = after(previous);
      }
      latest.set(key, version);
      own.push({ orgId, collection, stixId: versioned.id as string, type: versioned.type as string, version, object: { ...versioned, modified: version } });
    }
    // Shared objects first: what a reader needs comes no later than what refers to it.
    await this.repo.addVersions(trx, [...shared.versions, ...own], replacing);
  }

  /**
   * The objects many events share (identities, the TLP marking, observables, observed-data): one
   * version each, with the `created` of its first, and a new version only when the object changed
   * (a renamed source or organization), `created` kept and `modified` after the last. Within the
   * events, the first of an object gives its `created`, the last its content.
   */
  private async sharedVersions(trx: Kysely<DB>, built: EventObjects[]): Promise<{ versions: ObjectVersion[]; replacing: string[] }> {
    const candidates = new Map<string, { orgId: string; collection: CollectionKind; object: Record<string, unknown> }>();
    for (const { e, collection, shared } of built) {
      for (const object of shared) {
        const key = keyOf(e.organization_id, collection, object.id);
        const first = candidates.get(key);
        candidates.set(key, { orgId: e.organization_id, collection, object: first && object.created !== undefined ? { ...object, created: first.object.created } : object });
      }
    }
    const stored = await this.latest(trx, [...candidates.values()].map((c) => ({ orgId: c.orgId, collection: c.collection, id: c.object.id as string })), true);
    const versions: ObjectVersion[] = [];
    const replacing: string[] = [];
    for (const [key, { orgId, collection, object: candidate }] of candidates) {
      const previous = stored.get(key);
      let object = candidate;
      if (previous) {
        const kept = JSON.parse(previous.object as string) as Record<string, unknown>;
        if (sameContent(kept, candidate)) continue;
        // Changed: a new version of the same object, dated after the one it replaces.
        const modified = String(candidate.modified ?? '') > previous.version ? String(candidate.modified) : after(previous.version);
        object = { ...candidate, ...(kept.created !== undefined ? { created: kept.created, modified } : {}) };
        replacing.push(key);
      }
      versions.push({ orgId, collection, stixId: object.id as string, type: object.type as string, version: String(object.modified ?? object.created ?? ''), object });
    }
    return { versions, replacing };
  }

  /** The latest kept version of each of these objects (with its text if `withObject`), by keyOf: one lookup per organization and collection. */
  private async latest(trx: Kysely<DB>, refs: Array<{ orgId: string; collection: CollectionKind; id: string }>, withObject: boolean) {
    const groups = new Map<string, { orgId: string; collection: CollectionKind; ids: string[] }>();
    for (const r of refs) {
      const group = `${r.orgId} ${r.collection}`;
      if (!groups.has(group)) groups.set(group, { orgId: r.orgId, collection: r.collection, ids: [] });
      groups.get(group)!.ids.push(r.id);
    }
    const out = new Map<string, { version: string; object?: string }>();
    for (const { orgId, collection, ids } of groups.values()) {
      for (const [id, v] of await this.repo.latestObjects(trx, orgId, collection, ids, withObject)) out.set(keyOf(orgId, collection, id), v);
    }
    return out;
  }

  /** The organization's collections (made on first use, with ids that never change). */
  async collections(p: Principal): Promise<Array<{ id: string; kind: CollectionKind; title: string; description: string }>> {
    let rows = await this.repo.collections(this.db, p.organization.id);
    if (rows.length < COLLECTION_KINDS.length) {
      const at = this.deps.clock().toISOString();
      await this.repo.createCollections(this.db, COLLECTION_KINDS.map((kind) => ({ id: randomUUID(), organization_id: p.organization.id, kind, created_at: at })));
      rows = await this.repo.collections(this.db, p.organization.id);
    }
    return COLLECTION_KINDS.map((kind) => {
      const row = rows.find((r) => r.kind === kind)!;
      return { id: row.id, kind, ...COLLECTION_TEXT[kind] };
    });
  }

  async collection(p: Principal, id: string) {
    return (await this.collections(p)).find((c) => c.id === id.toLowerCase());
  }

  /** A page of a collection in date_added order, after dating what became visible since the last read. */
  async page(p: Principal, q: ObjectQuery): Promise<CollectionPage> {
    await this.stampPending(p.organization.id);
    const rows = await this.repo.page(this.db, p.organization.id, q);
    return { rows: rows.slice(0, q.limit), more: rows.length > q.limit };
  }

  exists(p: Principal, collection: CollectionKind, stixId: string): Promise<boolean> {
    return this.repo.exists(this.db, p.organization.id, collection, stixId);
  }

  /**
   * The background job's turn: dates every organization's committed versions, so that date_added
   * follows the change by about a second and a first poll after a large ingest does not wait.
   */
  async stampAll(stopping: () => boolean = () => false): Promise<void> {
    for (const orgId of await this.repo.pendingOrganizations(this.db)) {
      if (stopping()) return;
      await this.stampPending(orgId);
    }
  }

  private async stampPending(orgId: string): Promise<void> {
    // Bounded: versions that keep coming are dated by the next read or turn.
    for (let pass = 0; pass < 100 && (await this.repo.hasPending(this.db, orgId)); pass++) {
      const nowUs = this.deps.clock().getTime() * 1000;
      const dated = await this.db.transaction().execute((trx) => this.repo.stamp(trx, orgId, nowUs));
      if (dated === 0) return;
    }
  }
}
