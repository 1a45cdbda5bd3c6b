import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { type IocType } from '../../domain/ioc.js';
import { JobLoop, type JobLog } from '../../runtime/jobs.js';
import { FetchRefused, fetchGuarded } from '../webhooks/index.js';
import type { FeedRow, IndicatorRow } from './feeds.presenters.js';
import { type Candidate, FeedProblem, type Read, readList, readStixBundle } from './feeds.read.js';
import { type Get, readTaxii } from './feeds.taxii.js';
import { type FeedCorpus, type HibpRead, readHibp } from './feeds.hibp.js';
import { readFreetext, readMisp } from './feeds.misp.js';
import type { FeedsRepository } from './feeds.repository.js';
import type { FeedAuth } from './feeds.schemas.js';

/** What one pull may read: the answer's size, its objects, its time. A limit hit is the pull's last_error. */
export const PULL_LIMITS = { maxBytes: 64 * 1024 * 1024, maxObjects: 200_000, timeoutMs: 120_000 };
/** How long a process holds a feed it pulls; a process that dies frees it when this ends. */
const LEASE_MS = 10 * 60_000;
const CHUNK = 500;

export interface PullCounts {
  objects: number;
  added: number;
  updated: number;
  retired: number;
  rejected: number;
}

/** Whether a feed's word on an indicator says something its row does not. */
function differs(row: IndicatorRow, c: Candidate): boolean {
  return (
    (c.name !== null && c.name !== row.name) ||
    (c.confidence !== null && c.confidence !== (row.confidence === null ? null : Number(row.confidence))) ||
    (c.tlp !== null && c.tlp !== row.tlp) ||
    (c.labels.length > 0 && JSON.stringify(c.labels) !== row.labels) ||
    (c.valid_until !== null && Date.parse(c.valid_until) !== Date.parse(row.valid_until ?? '')) ||
    (c.modified !== null && row.modified === null)
  );
}

/** The request headers a feed's credentials make. */
function headersOf(auth: FeedAuth | null): Record<string, string> {
  if (!auth) return {};
  if (auth.type === 'basic') return { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` };
  if (auth.type === 'bearer') return { authorization: `Bearer ${auth.token}` };
  return { [auth.name.toLowerCase()]: auth.value };
}

/**
 * The pulls: a job claims each due feed (a lease taken in one statement, so one process in the
 * cluster pulls it), fetches it under the webhook guard and the limits, reads it, and applies what
 * it read with the feed's counts, health and next pull in one transaction: a pull is applied whole
 * or not at all. A failed pull says why in last_error and is tried again after 1, 2, 4... minutes,
 * at most the feed's interval.
 */
export class FeedPuller {
  readonly loop: JobLoop;

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config'>,
    private readonly repo: FeedsRepository,
    /** Where an hibp feed's accounts go (the leak corpus); without it, hibp feeds fail saying so. */
    private readonly corpus?: FeedCorpus,
  ) {
    this.loop = new JobLoop(() => this.pullDue(), 'feeds: a pull turn failed', { pollMs: 5000 });
  }

  start(log: JobLog) {
    this.loop.start(log);
  }

  stop() {
    return this.loop.stop();
  }

  wake() {
    this.loop.wake();
  }

  private now() {
    return this.deps.clock().toISOString();
  }

  private get db() {
    return this.deps.database.db;
  }

  /** Pulls every feed that is due and free; answers how many it pulled. */
  async pullDue(): Promise<number> {
    let pulled = 0;
    for (const { id } of await this.repo.dueFeeds(this.db, this.now(), 20)) {
      if (this.loop.stopping) break;
      const now = this.deps.clock();
      const feed = await this.repo.claim(this.db, id, now.toISOString(), new Date(now.getTime() + LEASE_MS).toISOString());
      if (!feed) continue;
      await this.pull(feed);
      pulled++;
    }
    return pulled;
  }

  /** One pull of a claimed feed. */
  async pull(feed: FeedRow): Promise<void> {
    const started = Date.now();
    const headers = headersOf(feed.auth ? (JSON.parse(feed.auth) as FeedAuth) : null);
    const allowPrivate = this.deps.config.allowPrivateDestinations;
    // Every request of a pull shares its time limit.
    const get = (url: string, accept?: string) =>
      fetchGuarded(url, { headers: { ...headers, ...(accept && { accept }) }, maxBytes: PULL_LIMITS.maxBytes, timeoutMs: Math.max(1, PULL_LIMITS.timeoutMs - (Date.now() - started)), allowPrivate });
    if (feed.kind === 'hibp') return this.pullHibp(feed, get);
    let read: Read & { cursor?: Record<string, string>; stopped?: string | null };
    try {
      const options = JSON.parse(feed.options) as { column?: string | number; type?: IocType; collections?: string[]; format?: string };
      const cursor = feed.cursor ? (JSON.parse(feed.cursor) as Record<string, string>) : {};
      if (feed.kind === 'taxii2') {
        read = await readTaxii(get, feed.url, options.collections ?? [], cursor, PULL_LIMITS.maxObjects);
      } else if (feed.kind === 'misp' && (options.format ?? 'misp') === 'misp') {
        read = await readMisp(get, feed.url, cursor, PULL_LIMITS.maxObjects);
      } else {
        const answer = await get(feed.url);
        if (answer.status !== 200) throw new FeedProblem(`the feed answered HTTP ${answer.status}`);
        read =
          feed.kind === 'stix' ? readStixBundle(answer.body, PULL_LIMITS.maxObjects) : options.format === 'freetext' ? readFreetext(answer.body, PULL_LIMITS.maxObjects) : readList(answer.body, options, PULL_LIMITS.maxObjects);
      }
    } catch (err) {
      if (!(err instanceof FeedProblem || err instanceof FetchRefused)) throw err;
      return this.failed(feed, err.message);
    }
    await this.applyRead(feed, read);
  }

  /** What a pull (or an upload) read, applied with the feed's counts, health and next pull in one transaction. */
  async applyRead(feed: FeedRow, read: Read & { cursor?: Record<string, string>; stopped?: string | null }): Promise<PullCounts> {
    const at = this.now();
    const stopped = read.stopped ?? null;
    return this.db.transaction().execute(async (trx) => {
      const counts = await this.apply(trx, feed, read.candidates, at);
      await this.repo.finishPull(
        trx,
        feed.id,
        {
          last_pull_at: at,
          // A TAXII or MISP pull cut short applies its good pages (events) and cursor, says why, and goes on soon.
          ...(stopped === null ? pulledWhole(feed, at) : { last_error: stopped.slice(0, 1000), consecutive_failures: Number(feed.consecutive_failures) + 1, next_pull_at: new Date(Date.parse(at) + 60 * 1000).toISOString() }),
          ...(read.cursor && { cursor: JSON.stringify(read.cursor) }),
          ...(read.examples.length && { reject_examples: JSON.stringify(read.examples) }),
        },
        { ...counts, objects: read.objects, rejected: read.rejected },
      );
      return { ...counts, objects: read.objects, rejected: read.rejected };
    });
  }

  /**
   * An hibp feed: the organization's own domains asked of the upstream, and each breach's accounts
   * added to the leak corpus (a source per breach, "<title> (Have I Been Pwned)"), through the
   * ingest every record takes, so monitors fire. An account already there is a duplicate, never a
   * second record: a pull cut short and pulled again adds only what it had not.
   */
  private async pullHibp(feed: FeedRow, get: Get): Promise<void> {
    if (!this.corpus) return this.failed(feed, 'this server has no leak corpus to add accounts to');
    const domains = await this.corpus.domains(feed.organization_id);
    if (domains.length === 0) return this.failed(feed, 'the organization watches no domain: add a domain monitor for each of its own domains');
    let read: HibpRead;
    try {
      read = await readHibp(get, feed.url, domains, PULL_LIMITS.maxObjects);
    } catch (err) {
      if (!(err instanceof FeedProblem || err instanceof FetchRefused)) throw err;
      return this.failed(feed, err.message);
    }
    let added = 0;
    for (const [name, emails] of read.accounts) added += await this.corpus.add(await this.corpus.source(read.breaches.get(name)!), emails);
    const at = this.now();
    await this.repo.finishPull(
      this.db,
      feed.id,
      { last_pull_at: at, ...pulledWhole(feed, at), ...(read.examples.length && { reject_examples: JSON.stringify(read.examples) }) },
      { objects: read.objects, added: 0, updated: 0, retired: 0, rejected: read.rejected, records: added },
    );
  }

  private async failed(feed: FeedRow, message: string) {
    const at = this.now();
    const failures = Number(feed.consecutive_failures) + 1;
    const wait = Math.min(Number(feed.interval_seconds), 60 * 2 ** Math.min(failures - 1, 12));
    await this.repo.finishPull(this.db, feed.id, { last_pull_at: at, last_error: message.slice(0, 1000), consecutive_failures: failures, next_pull_at: new Date(Date.parse(at) + wait * 1000).toISOString() }, { objects: 0, added: 0, updated: 0, retired: 0, rejected: 0 });
  }

  /**
   * Indicators in, deduplicated by type and value: a new one is added; a known one takes a newer
   * version (a later `modified`, or a feed without versions), and `revoked` retires it.
   */
  async apply(trx: Kysely<DB>, feed: FeedRow, candidates: Candidate[], at: string): Promise<Omit<PullCounts, 'objects' | 'rejected'>> {
    const counts = { added: 0, updated: 0, retired: 0 };
    // The last of a value in one pull is its version.
    const latest = new Map<string, Candidate>();
    for (const c of candidates) latest.set(`${c.type}\u0000${c.value}`, c);
    const byType = new Map<string, Candidate[]>();
    for (const c of latest.values()) {
      const list = byType.get(c.type);
      if (list) list.push(c);
      else byType.set(c.type, [c]);
    }
    for (const [type, list] of byType) {
      for (let i = 0; i < list.length; i += CHUNK) {
        const chunk = list.slice(i, i + CHUNK);
        const known = new Map<string, IndicatorRow>((await this.repo.indicatorsByValue(trx, feed.organization_id, type, chunk.map((c) => c.value))).map((r) => [r.value, r]));
        const fresh = chunk.filter((c) => !known.has(c.value));
        const ids: string[] = [];
        const rows = fresh.map((c) => {
          const id = this.deps.newId();
          ids.push(id);
          return { id, organization_id: feed.organization_id, type, value: c.value, stix_id: c.stix_id, name: c.name, confidence: c.confidence, tlp: c.tlp, labels: JSON.stringify(c.labels), valid_until: c.valid_until, modified: c.modified, revoked: c.revoked, false_positive: false, note: null, first_seen: at, last_seen: at, created_at: at, updated_at: at };
        });
        await this.repo.insertIndicators(trx, rows);
        counts.added += rows.length;
        const seen: string[] = [];
        for (const c of chunk) {
          const row = known.get(c.value);
          if (!row) continue;
          ids.push(row.id);
          // A version: a later `modified`; without versions (lists), anything said differently.
          const newer = row.modified && c.modified ? Date.parse(c.modified) > Date.parse(row.modified) : differs(row, c);
          const retire = c.revoked && !row.revoked;
          if (!newer && !retire) {
            seen.push(row.id);
            continue;
          }
          await this.repo.updateIndicator(trx, row.id, {
            last_seen: at,
            updated_at: at,
            stix_id: c.stix_id ?? row.stix_id,
            name: c.name ?? row.name,
            confidence: c.confidence ?? row.confidence,
            tlp: c.tlp ?? row.tlp,
            labels: c.labels.length ? JSON.stringify(c.labels) : row.labels,
            valid_until: c.valid_until ?? row.valid_until,
            modified: c.modified ?? row.modified,
            revoked: c.revoked || Boolean(row.revoked),
          });
          if (retire) counts.retired++;
          else counts.updated++;
        }
        await this.repo.touchIndicators(trx, seen, at);
        await this.repo.linkFeed(trx, feed.id, ids, at);
      }
    }
    return counts;
  }
}

/** A feed's health after a pull that read to its end: it succeeded, no error, the next pull one interval on. */
function pulledWhole(feed: FeedRow, at: string) {
  return { last_success_at: at, last_error: null, consecutive_failures: 0, next_pull_at: new Date(Date.parse(at) + Number(feed.interval_seconds) * 1000).toISOString() };
}
