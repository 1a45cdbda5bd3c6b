import { type ClassedRecord, DATA_CLASS_TESTS } from '../../domain/leak-record.js';
import { WordHashes } from './word-hashes.js';

/** The counters kept beside the leak records, and how records added or removed change them. */

/** Counter changes of an ingest's open transaction (see LeakIngest.writeCounts). */
export interface TransactionCounts {
  /** leak_counters: total, data classes, months. */
  corpus: Map<string, number>;
  /** leak_domain_counts, by reversed domain. */
  domains: Map<string, number>;
  /** Records added to the source. */
  records: number;
  /** PostgreSQL: words written to leak_words (LeaksRepository.addWords), known to be there once committed. */
  words: WordHashes;
}

export const newTransactionCounts = (): TransactionCounts => ({ corpus: new Map(), domains: new Map(), records: 0, words: new WordHashes() });

/**
 * The corpus counter changes of records added (+1) or removed (-1): total, each data class,
 * with_password, and the month leaked (else the source's breach date). Counted per batch, so each
 * counter's key is made once a batch, not once a record.
 */
export function counterDeltas(records: Array<ClassedRecord & { leaked_at: string | null }>, breachDate: string | null, sign: 1 | -1, deltas = new Map<string, number>()): Map<string, number> {
  const tally = new CorpusTally(breachDate);
  for (const r of records) tally.add(r);
  return tally.deltas(sign, deltas);
}

/** counterDeltas record by record: records tallied as they come (the import's reader), the changes made once. */
export class CorpusTally {
  private readonly classes = DATA_CLASS_TESTS.map(() => 0);
  private readonly months = new Map<string, number>();
  private total = 0;

  constructor(private readonly breachDate: string | null) {}

  add(r: ClassedRecord & { leaked_at: string | null }): void {
    this.total++;
    for (let i = 0; i < DATA_CLASS_TESTS.length; i++) if ((DATA_CLASS_TESTS[i] as (typeof DATA_CLASS_TESTS)[number])[1](r)) this.classes[i] = (this.classes[i] as number) + 1;
    const when = r.leaked_at ?? this.breachDate;
    if (when) {
      const month = when.slice(0, 7);
      this.months.set(month, (this.months.get(month) ?? 0) + 1);
    }
  }

  /** The counter changes of the records tallied, added to `deltas`. */
  deltas(sign: 1 | -1, deltas = new Map<string, number>()): Map<string, number> {
    const add = (key: string, n: number) => deltas.set(key, (deltas.get(key) ?? 0) + n);
    add('total', sign * this.total);
    DATA_CLASS_TESTS.forEach(([c], i) => add(`class:${c}`, sign * (this.classes[i] as number)));
    // Records with a password are those of the password class (in `deltas` as given, too).
    deltas.set('with_password', deltas.get('class:password') as number);
    for (const [month, n] of this.months) add(`month:${month}`, sign * n);
    return deltas;
  }
}

/** Per-domain count changes of records added (+1) or removed (-1), added to `deltas` when given. */
export function domainDeltas(records: Array<{ domain_rev: string | null }>, sign: 1 | -1, deltas = new Map<string, number>()): Map<string, number> {
  for (const r of records) if (r.domain_rev) deltas.set(r.domain_rev, (deltas.get(r.domain_rev) ?? 0) + sign);
  return deltas;
}
