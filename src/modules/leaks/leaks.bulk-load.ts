import type { AppDeps } from '../../deps.js';
import { beginBulkLoad, bulkLoadState, finishBulkLoad, heartbeat, leaveBulkLoad, liveBulkLoaders } from './leaks.bulk-load.repository.js';

/** Pages of write-ahead log (256 MiB) after which a bulk load checkpoints: SQLite's 1,000 checkpoint too often for a load. */
const BULK_WAL_PAGES = 65_536;
/** SQLite page cache (KiB) of a plain CLI import: half a server's, which keeps the import under its memory target at the same speed. */
const PLAIN_IMPORT_CACHE_KIB = 32 * 1024;
/**
 * A process taking part in a bulk load that showed it was alive this recently (each commit, about
 * every second while records flow; each step of a rebuild) is still loading, unless it is seen to
 * be gone: see liveBulkLoaders. An import whose input stalls for longer counts as interrupted.
 */
export const BULK_LOAD_ALIVE_MS = 2 * 60_000;

/**
 * A bulk load's life in this process (SQLite, `import-leaks --bulk`): begun, its connection tuned
 * for loading, shown alive with each commit, and ended by rebuilding what it set aside (see
 * leaks.bulk-load.repository.ts), or left to another import still loading.
 */
/**
 * A bulk load of the corpus, as the import and the server drive it, the same on both databases:
 * the one for the database in use is chosen once (LeaksService).
 */
export interface BulkLoads {
  /** Whether this process began (or joined) a bulk load it has not finished. */
  readonly inBulkLoad: boolean;
  /** With each commit of a bulk load's transaction: the load is alive. */
  heartbeat(): void;
  /** A plain (not bulk) CLI import's page cache (SQLite); returns what puts it back. */
  importPageCache(): () => void;
  /** Starts a bulk load, or joins the one in progress: search indexes set aside until it ends. */
  begin(): Promise<void>;
  /** Rebuilds what the load set aside; false when there was nothing to rebuild. */
  finish(onStep?: (step: string, ms: number) => void): Promise<boolean>;
  /** This process's part ends: the last importer out rebuilds, another still loading leaves it to that one. */
  end(onStep?: (step: string, ms: number) => void, onRebuild?: () => void): Promise<'rebuilt' | 'left to another import' | 'none'>;
  /** A server's turn: finishes a load whose importers are gone. */
  finishInterrupted(onStep?: (step: string, ms: number) => void): Promise<'finished' | 'in progress' | 'none'>;
}

export class SqliteBulkLoads implements BulkLoads {
  /** This connection's settings before the bulk load it began (see begin). */
  private beforeBulk?: { cacheSize: number; walAutocheckpoint: number };

  constructor(private readonly deps: Pick<AppDeps, 'database' | 'clock'>) {}

  private now() {
    return this.deps.clock().toISOString();
  }

  /** With each commit of a bulk load's transaction: the load is alive (the same connection, in that transaction). */
  heartbeat(): void {
    if (this.beforeBulk) heartbeat(this.sqlite, this.now());
  }

  private get sqlite() {
    const raw = this.deps.database.sqlite;
    if (!raw) throw new Error('bulk loads are for the embedded SQLite database');
    return raw;
  }

  /**
   * SQLite: this connection's page cache, for a plain CLI import (importLeaks), made
   * PLAIN_IMPORT_CACHE_KIB; a bulk load sets its own (see begin). Returns what puts it back.
   */
  importPageCache(): () => void {
    const raw = this.deps.database.sqlite;
    if (!raw || this.inBulkLoad) return () => undefined;
    const before = raw.pragma('cache_size', { simple: true }) as number;
    raw.pragma(`cache_size = -${PLAIN_IMPORT_CACHE_KIB}`);
    return () => raw.pragma(`cache_size = ${before}`);
  }

  /** Whether this service began a bulk load it has not finished (an import of several files shares one). */
  get inBulkLoad(): boolean {
    return this.beforeBulk !== undefined;
  }

  /**
   * See bulk-load.ts: search indexes set aside until finishBulkLoad(). With them gone, loading is
   * mostly appending, so this connection's page cache shrinks to 16 MiB until the load finishes:
   * the importer's memory stays flat and low. And the write-ahead log is checkpointed into the
   * database once it holds BULK_WAL_PAGES rather than SQLite's 1,000 (4 MiB): the pages that every
   * commit touches again (the key index of the source being loaded, the counters, the table's last
   * pages) are copied into the database once per 256 MiB instead of every few commits.
   */
  async begin(): Promise<void> {
    beginBulkLoad(this.sqlite, this.now());
    this.beforeBulk ??= {
      cacheSize: this.sqlite.pragma('cache_size', { simple: true }) as number,
      walAutocheckpoint: this.sqlite.pragma('wal_autocheckpoint', { simple: true }) as number,
    };
    this.sqlite.pragma('cache_size = -16384');
    this.sqlite.pragma(`wal_autocheckpoint = ${BULK_WAL_PAGES}`);
  }

  /** Rebuilds what a bulk load set aside; false when none was in progress (always on PostgreSQL). */
  async finish(onStep?: (step: string, ms: number) => void): Promise<boolean> {
    const raw = this.deps.database.sqlite;
    if (!raw) return false;
    try {
      return finishBulkLoad(raw, { now: () => this.now(), onStep });
    } finally {
      this.afterBulkLoad(raw);
    }
  }

  /**
   * The end of this process's part in a bulk load (`import-leaks --bulk`): it rebuilds what the
   * load set aside, unless another import is still loading into it, which then rebuilds when it
   * ends (rebuilt by the first to end, the rest of the other would load with every index kept up
   * to date, several times slower). `onRebuild` is called before a rebuild begins, `onStep` after each of its steps.
   */
  async end(onStep?: (step: string, ms: number) => void, onRebuild?: () => void): Promise<'rebuilt' | 'left to another import' | 'none'> {
    const raw = this.deps.database.sqlite;
    if (!raw) return 'none';
    if (liveBulkLoaders(raw, this.deps.clock().getTime(), BULK_LOAD_ALIVE_MS, true) > 0) {
      leaveBulkLoad(raw);
      this.afterBulkLoad(raw);
      return 'left to another import';
    }
    if (this.inBulkLoad) onRebuild?.();
    return (await this.finish(onStep)) ? 'rebuilt' : 'none';
  }

  /** This connection's settings back as they were before its bulk load (see begin). */
  private afterBulkLoad(raw: NonNullable<AppDeps['database']['sqlite']>) {
    if (this.beforeBulk) {
      raw.pragma(`cache_size = ${this.beforeBulk.cacheSize}`);
      raw.pragma(`wal_autocheckpoint = ${this.beforeBulk.walAutocheckpoint}`);
      // The log is back in the database and the file back to nothing, not left at 256 MiB.
      raw.pragma('wal_checkpoint(TRUNCATE)');
    }
    this.beforeBulk = undefined;
  }

  /**
   * At start-up (`threatmon serve`): finishes a bulk load whose processes are gone (killed, or
   * silent for BULK_LOAD_ALIVE_MS; see liveBulkLoaders), and leaves one in progress to its imports:
   * finishing a live load would make the rest of it load with every index kept up to date.
   */
  async finishInterrupted(onStep?: (step: string, ms: number) => void): Promise<'finished' | 'in progress' | 'none'> {
    const raw = this.deps.database.sqlite;
    const state = raw ? bulkLoadState(raw, this.deps.clock().getTime(), BULK_LOAD_ALIVE_MS) : 'none';
    if (state !== 'interrupted') return state;
    return (await this.finish(onStep)) ? 'finished' : 'none';
  }
}
