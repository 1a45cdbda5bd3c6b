import type { AppDeps } from '../../deps.js';
import type { ForeignErrors } from '../../http/conventions.js';
import { type BackgroundJob, JobLoop } from '../../runtime/jobs.js';
import { bind, type BoundPlugin } from '../../http/routes.js';
import type { AppHookRegistry } from '../hooks.js';
import type { OrganizationsService } from '../organizations/index.js';
import { TaxiiRepository } from './taxii.repository.js';
import { sendTaxiiError, TAXII_PREFIX } from './taxii.http.js';
import { taxiiRoutes } from './taxii.routes.js';
import { TaxiiService } from './taxii.service.js';
import type { Module } from '../module-parts.js';

export { TaxiiService };

/** What the TAXII server is made from. */
export type TaxiiDeps = Pick<AppDeps, 'database' | 'clock'> & {
  hooks: AppHookRegistry;
  orgs: Pick<OrganizationsService, 'names'>;
  /** Identity's authentication, with HTTP Basic. */
  authenticate: BoundPlugin;
  bodyLimit: number;
  /** How often new versions are dated in the background (a read dates its organization's first). */
  datingMs?: number;
};

const DATING_MS = 1000;

/**
 * TAXII 2.1 at /taxii2/ (outside /api/v1): the organization's IOCs and alerts as STIX collections,
 * written from the events every change records (events.recorded), in the change's transaction.
 */
export function createTaxiiModule(ctx: TaxiiDeps) {
  const service = new TaxiiService(ctx, new TaxiiRepository(ctx.database.dialect), (db, ids) => ctx.orgs.names(ids, db));
  ctx.hooks.on('events.recorded', (trx, events) => service.record(trx, events));
  const dating: JobLoop = new JobLoop(() => service.stampAll(() => dating.stopping), 'TAXII: dating new versions failed', { pollMs: ctx.datingMs ?? DATING_MS });
  return {
    name: 'taxii',
    service,
    prefix: TAXII_PREFIX,
    // Unknown paths and methods under the prefix answer in TAXII's error format.
    foreignErrors: [{ prefix: `${TAXII_PREFIX}/`, send: (reply, status, title) => sendTaxiiError(reply, status, title) } satisfies ForeignErrors],
    jobs: [{ name: 'TAXII dating', start: (log) => dating.start(log), stop: () => dating.stop() }] satisfies BackgroundJob[],
    siteRoutes: [bind(taxiiRoutes, { taxii: service, authenticate: ctx.authenticate, bodyLimit: ctx.bodyLimit, prefix: TAXII_PREFIX })],
  } as const satisfies Module;
}
