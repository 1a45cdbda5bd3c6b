import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import { type BackgroundJob, JobLoop } from '../../runtime/jobs.js';
import type { AuditLog } from '../audit/index.js';
import type { AppHookRegistry } from '../hooks.js';
import { leaksRoutes } from './leaks.routes.js';
import { LeaksService } from './leaks.service.js';
import type { Module } from '../module-parts.js';

export { IngestCutOff, type IngestItem, type IngestReport, LeaksService, type RowsMade } from './leaks.service.js';
export { type EncodedRows, RowsInProgress } from './leaks.copy-rows.js';
export { BATCH_SIZE, MAX_BATCH_BYTES } from './leaks.ingest.js';
export {
  DEFAULT_EXPANSION,
  ExpansionLimit,
  type ExpansionLimits,
  formatNamed,
  IMPORT_FORMATS,
  type ImportFormat,
  inputMembers,
  type InputItem,
  openInput,
  type ReadPosition,
  UnknownLineFormat,
} from './input/index.js';
export { RECORD_JSON, RECORD_JSON_PG_VALUE, type HashMode, type SourceRow } from './leaks.repository.js';
export { batchRecordTexts } from './leaks.shard-search.js';
export { LeakRecordSchema, SOURCE_KINDS, type SourceKind } from './leaks.schemas.js';

/** How often a server looks for a bulk load whose importers are gone (and, over shards, for a batch's prepared parts). */
const BULK_LOAD_WATCH_MS = 30_000;

/** What the leaks module is made from. */
export type LeaksDeps = Pick<AppDeps, 'database' | 'clock' | 'newId' | 'metrics' | 'config'> & {
  audit: AuditLog;
  hooks: AppHookRegistry;
  /** How often abandoned bulk loads are looked for (tests: less). */
  bulkLoadWatchMs?: number;
};

/**
 * The leak corpus: sources, ingestion (which publishes leaks.ingested), search, saved searches,
 * statistics and the pwned-passwords range. A new password found in the corpus is refused.
 */
export function createLeaksModule(ctx: LeaksDeps) {
  const service = new LeaksService(ctx, ctx.audit, ctx.hooks);
  ctx.hooks.on('auth.breachCheck', (password, db) => service.isBreached(password, db));
  // A bulk load whose importers are gone (killed; on SQLite also silent for BULK_LOAD_ALIVE_MS) is
  // finished here, however long after start-up that happens. The rebuild holds this process while it
  // runs (seconds per million records), as it would an import's.
  const abandoned: JobLoop = new JobLoop(
    async () => {
      if ((await service.bulk.finishInterrupted()) === 'finished') abandoned.log?.info?.({}, 'finished an abandoned bulk load of the leak corpus: its search indexes are rebuilt');
    },
    'bulk loads: finishing an abandoned one failed',
    { pollMs: ctx.bulkLoadWatchMs ?? BULK_LOAD_WATCH_MS },
  );
  const jobs: BackgroundJob[] = [{ name: 'abandoned bulk loads', start: (log) => abandoned.start(log), stop: () => abandoned.stop() }];
  const shards = ctx.database.corpusShards;
  if (shards) {
    // A batch whose process died between its main commit and its shards' COMMIT PREPARED (or before
    // its main commit) holds its shard parts prepared: unseen and locked until ended. A start ends
    // them; a server that keeps running ends them here. Safe beside live batches (see recover()).
    const prepared: JobLoop = new JobLoop(
      async () => {
        const done = await shards.recover(ctx.database.db);
        if (done.committed + done.rolledBack > 0) prepared.log?.info?.(done, 'ended the corpus shards\' prepared parts of batches whose process is gone');
      },
      'corpus shards: ending prepared parts failed',
      { pollMs: ctx.bulkLoadWatchMs ?? BULK_LOAD_WATCH_MS },
    );
    jobs.push({ name: 'prepared shard parts', start: (log) => prepared.start(log), stop: () => prepared.stop() });
  }
  return { name: 'leaks', service, routes: [bind(leaksRoutes, { leaks: service })], jobs } as const satisfies Module;
}
