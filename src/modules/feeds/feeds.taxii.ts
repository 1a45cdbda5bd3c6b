import type { Fetched } from '../webhooks/index.js';
import { type Candidate, FeedProblem, readStixObjects } from './feeds.read.js';

const TAXII = 'application/taxii+json;version=2.1';
const PAGE = 1000;

/** A GET of the feed's server, with its credentials, under the guard and limits. */
export type Get = (url: string, accept: string) => Promise<Fetched>;

/** What a TAXII pull read: the collections' indicators up to the last good page, and where each collection stands. */
export interface TaxiiRead {
  objects: number;
  candidates: Candidate[];
  rejected: number;
  examples: string[];
  cursor: Record<string, string>;
  /** Why it stopped before the end (a page that failed, the object limit): what came before is applied. */
  stopped: string | null;
}

async function json(get: Get, url: string): Promise<any> {
  const answer = await get(url, TAXII);
  if (answer.status !== 200) throw new FeedProblem(`${url} answered HTTP ${answer.status}`);
  try {
    return JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw new FeedProblem(`${url} did not answer JSON`);
  }
}

/** The API root of a URL that is one, or of a discovery URL (its default root, else its first). */
async function apiRoot(get: Get, url: string): Promise<string> {
  const doc = await json(get, url);
  if (doc && Array.isArray(doc.api_roots)) {
    const root = typeof doc.default === 'string' ? doc.default : doc.api_roots[0];
    if (typeof root !== 'string') throw new FeedProblem('the discovery answer names no API root');
    return new URL(root, url).toString();
  }
  if (doc && Array.isArray(doc.versions)) return url.endsWith('/') ? url : `${url}/`;
  throw new FeedProblem('the URL is neither a TAXII 2.1 discovery nor an API root');
}

/**
 * A TAXII 2.1 pull: the collections named (by id or title; none: every readable one), each read
 * from its cursor (`added_after`, the last page's X-TAXII-Date-Added-Last) page after page
 * (`next` while `more`), up to `maxObjects` in all. A failed page ends the pull there: the pages
 * before it, and the cursor after them, are what it applies.
 */
export async function readTaxii(get: Get, url: string, wanted: string[], cursor: Record<string, string>, maxObjects: number): Promise<TaxiiRead> {
  const root = await apiRoot(get, url);
  const listed = await json(get, new URL('collections/', root).toString());
  const collections = (Array.isArray(listed?.collections) ? listed.collections : []) as Array<{ id: string; title?: string; can_read?: boolean }>;
  const chosen = wanted.length ? collections.filter((c) => wanted.includes(c.id) || (c.title !== undefined && wanted.includes(c.title))) : collections.filter((c) => c.can_read);
  const missing = wanted.filter((w) => !collections.some((c) => c.id === w || c.title === w));
  if (missing.length) throw new FeedProblem(`the server has no readable collection ${missing.map((m) => `"${m}"`).join(', ')}`);
  const out: TaxiiRead = { objects: 0, candidates: [], rejected: 0, examples: [], cursor: { ...cursor }, stopped: null };
  for (const collection of chosen) {
    let next: string | null = null;
    for (let more = true; more; ) {
      if (out.objects >= maxObjects) {
        out.stopped = `stopped after ${maxObjects} objects (the limit of a pull): the rest comes in the next pull`;
        return out;
      }
      const page = new URL(`collections/${encodeURIComponent(collection.id)}/objects/`, root);
      page.searchParams.set('limit', String(Math.min(PAGE, maxObjects - out.objects)));
      if (next) page.searchParams.set('next', next);
      else if (out.cursor[collection.id]) page.searchParams.set('added_after', out.cursor[collection.id]!);
      let answer: Fetched;
      let envelope: { more?: unknown; next?: unknown; objects?: unknown };
      try {
        answer = await get(page.toString(), TAXII);
        if (answer.status !== 200) throw new FeedProblem(`${page.pathname} answered HTTP ${answer.status}`);
        envelope = JSON.parse(answer.body.toString('utf8'));
      } catch (err) {
        out.stopped = err instanceof FeedProblem ? err.message : `${page.pathname}: ${(err as Error).message}`;
        return out;
      }
      const objects = Array.isArray(envelope.objects) ? envelope.objects : [];
      const read = readStixObjects(objects);
      out.objects += read.objects;
      out.candidates.push(...read.candidates);
      out.rejected += read.rejected;
      for (const e of read.examples) if (out.examples.length < 5) out.examples.push(e);
      const last = answer.headers['x-taxii-date-added-last'];
      if (typeof last === 'string' && last) out.cursor[collection.id] = last;
      more = envelope.more === true && objects.length > 0;
      next = typeof envelope.next === 'string' ? envelope.next : null;
      if (more && !next && !(typeof last === 'string' && last)) more = false;
    }
  }
  return out;
}
