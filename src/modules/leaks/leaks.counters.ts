import { type ClassedRecord, DATA_CLASS_TESTS } from '../../domain/leak-record.js';

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
  words: Set<string>;
}

export const newTransactionCounts = (): TransactionCounts => ({ corpus: new Map(), domains: new Map(), records: 0, words: new Set() });

/**
 * The corpus counter changes of records added (+1) or removed (-1): total, each data class,
 * with_password, and the month leaked (else the source's breach date). Counted per batch, so each
 * counter's key is made once a batch, not once a record.
 */
export function counterDeltas(records: Array<ClassedRecord & { leaked_at: string | null }>, breachDate: string | null, sign: 1 | -1, deltas = new Map<string, number>()): Map<string, number> {
  const classes = DATA_CLASS_TESTS.map(() => 0);
  const months = new Map<string, number>();
  for (const r of records) {
    DATA_CLASS_TESTS.forEach(([, has], i) => {
      if (has(r)) classes[i] = (classes[i] as number) + 1;
    });
    const when = r.leaked_at ?? breachDate;
    if (when) {
      const month = when.slice(0, 7);
      months.set(month, (months.get(month) ?? 0) + 1);
    }
  }
  const add = (key: string, n: number) => deltas.set(key, (deltas.get(key) ?? 0) + n);
  add('total', sign * records.length);
  DATA_CLASS_TESTS.forEach(([c], i) => add(`class:${c}`, sign * (classes[i] as number)));
  // Records with a password are those of the password class (in `deltas` as given, too).
  deltas.set('with_password', deltas.get('class:password') as number);
  for (const [month, n] of months) add(`month:${month}`, sign * n);
  return deltas;
}

/** Per-domain count changes of records added (+1) or removed (-1), added to `deltas` when given. */
export function domainDeltas(records: Array<{ domain_rev: string | null }>, sign: 1 | -1, deltas = new Map<string, number>()): Map<string, number> {
  for (const r of records) if (r.domain_rev) deltas.set(r.domain_rev, (deltas.get(r.domain_rev) ?? 0) + sign);
  return deltas;
}
