import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { FullTextTerm } from '../../domain/leak-record.js';

/** The statistics PostgreSQL's ANALYZE keeps of the corpus, read as its planner reads them (see LeakSearches.pageFromSlice). */

/** PostgreSQL's own guesses for a word (ts_selfuncs.c): DEFAULT_TS_MATCH_SEL. */
const DEFAULT_WORD_SHARE = 0.005;

/**
 * A column's spread as ANALYZE describes it (PostgreSQL's pg_stats): its most common values with
 * the share of rows each holds, and the bounds of a histogram whose buckets share the rest equally.
 */
export class CreatedSpread {
  private readonly bucket: number;

  constructor(
    private readonly common: number[],
    private readonly freqs: number[],
    private readonly bounds: number[],
  ) {
    const rest = 1 - freqs.reduce((a, b) => a + b, 0);
    this.bucket = bounds.length > 1 ? rest / (bounds.length - 1) : 0;
  }

  /**
   * The value that leaves about `share` of the rows at or above it (at or below, ascending), the
   * rows of a histogram bucket taken as spread evenly over it, as the planner takes them: a bucket
   * is 1% of the corpus at the default statistics target, a million records at 100M. Null when
   * only the whole column holds the share.
   */
  cut(share: number, above: boolean): number | null {
    const values = [...this.common, ...this.bounds];
    if (!values.length) return null;
    // Binary search between the oldest and newest value for the one that holds the share:
    // `held` falls as the cut moves away from the end the slice starts at.
    let [inside, outside] = above ? [Math.min(...values), Math.max(...values)] : [Math.max(...values), Math.min(...values)];
    if (this.held(outside, above) >= share) inside = outside;
    else for (let i = 0; i < 64; i++) {
      const mid = (inside + outside) / 2;
      if (this.held(mid, above) >= share) inside = mid;
      else outside = mid;
    }
    return this.held(inside, above) >= 1 - 1e-9 ? null : inside;
  }

  /** The share of the rows at or above `v` (at or below when not `above`). */
  private held(v: number, above: boolean): number {
    const beyond = (x: number) => (above ? x >= v : x <= v);
    let held = this.common.reduce((sum, c, i) => (beyond(c) ? sum + (this.freqs[i] ?? 0) : sum), 0);
    for (let i = 0; i + 1 < this.bounds.length; i++) {
      const lo = this.bounds[i] as number;
      const hi = this.bounds[i + 1] as number;
      const part = hi > lo ? (above ? hi - v : v - lo) / (hi - lo) : beyond(lo) ? 1 : 0;
      held += this.bucket * Math.min(1, Math.max(0, part));
    }
    return held;
  }
}

/**
 * How often the commonest words of the corpus occur (pg_stats of the full-text index's
 * expression), and the estimate PostgreSQL's planner makes from them for a full-text query
 * (ts_selfuncs.c): a word's share of the records, or for a word not among the commonest half the
 * least common one's share (at most 0.5%); words AND-ed (a phrase too) multiply, a spelled-out
 * prefix's words OR-ed.
 */
export class WordStats {
  private readonly shares = new Map<string, number>();
  private readonly rare: number;

  constructor(
    private readonly rows: number,
    words: string[],
    freqs: number[],
  ) {
    words.forEach((w, i) => this.shares.set(w, freqs[i] ?? 0));
    // After one frequency per word, PostgreSQL adds the least, the greatest and the null share.
    const least = freqs[words.length];
    this.rare = Math.min(DEFAULT_WORD_SHARE, least === undefined ? DEFAULT_WORD_SHARE : least / 2);
  }

  /** The entries of the full-text index's posting lists a bitmap of `terms` reads: each word's records. */
  postings(terms: FullTextTerm[]): number {
    const words = terms.flatMap((t) => (t.kind === 'prefix' ? [...t.words.slice(0, -1), ...(t.completions ?? [])] : t.words));
    return words.reduce((sum, w) => sum + this.rows * this.share(w), 0);
  }

  /** The share of the records holding word `w`, as the planner takes it. */
  private share(w: string): number {
    return this.shares.get(w) ?? this.rare;
  }

  /** The planner's estimate of the records `terms` match; undefined for a prefix left as one. */
  estimate(terms: FullTextTerm[]): number | undefined {
    let all = 1;
    for (const t of terms) {
      const words = t.kind === 'prefix' ? t.words.slice(0, -1) : t.words;
      for (const w of words) all *= this.share(w);
      if (t.kind !== 'prefix') continue;
      if (!t.completions) return undefined;
      all *= 1 - t.completions.reduce((none, c) => none * (1 - this.share(c)), 1);
    }
    return this.rows * all;
  }
}

/** How long the statistics slices are cut from are kept (they change with ANALYZE). */
const STATS_TTL_MS = 60_000;

/** ANALYZE's statistics of the corpus (CorpusStatsReader). */
export interface CorpusStats {
  records: number;
  created: CreatedSpread;
  words: WordStats | null;
}

/** Reads the corpus's statistics from pg_stats, kept a while. */
export class CorpusStatsReader {
  constructor(private readonly db: Kysely<DB>) {}

  private kept?: { at: number; stats: CorpusStats };

  /**
   * ANALYZE's statistics of the corpus, kept STATS_TTL_MS: how created_at is spread, and how often
   * the commonest words occur. Null before any ANALYZE.
   */
  async get(): Promise<CorpusStats | null> {
    const now = performance.now();
    if (this.kept && now - this.kept.at < STATS_TTL_MS) return this.kept.stats;
    const epochs = (column: string) => sql`array(select extract(epoch from v)::float8 from unnest(${sql.ref(column)}::text::timestamptz[]) as v)`;
    const column = (name: string) => sql`from pg_stats where schemaname = current_schema() and tablename = 'leak_records' and attname = ${name}`;
    // The words' statistics are those of the full-text index's expression (ANALYZE keeps them under the index's name).
    const wordsIndex = sql`from pg_stats where schemaname = current_schema() and tablename = 'leak_records_search_idx'`;
    const { rows } = await sql<{ rows: number; common: number[] | null; freqs: number[] | null; bounds: number[] | null; words: string[] | null; word_freqs: number[] | null }>`select
        (select greatest((select reltuples from pg_class where oid = 'leak_records'::regclass),
          (select sum(c.reltuples) from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'leak_records'::regclass))) as rows,
        (select ${epochs('most_common_vals')} ${column('created_at')}) as common,
        (select most_common_freqs ${column('created_at')}) as freqs,
        (select ${epochs('histogram_bounds')} ${column('created_at')}) as bounds,
        (select most_common_elems::text::text[] ${wordsIndex}) as words,
        (select most_common_elem_freqs ${wordsIndex}) as word_freqs`.execute(this.db);
    const row = rows[0];
    if (!row || (!row.common && !row.bounds)) return null;
    const records = Number(row.rows);
    const words = row.words && row.word_freqs ? new WordStats(records, row.words, row.word_freqs) : null;
    const stats = { records, created: new CreatedSpread(row.common ?? [], row.freqs ?? [], row.bounds ?? []), words };
    this.kept = { at: now, stats };
    return stats;
  }
}
