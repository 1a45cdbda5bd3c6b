import type { TSchema } from 'typebox';
import type { ForeignErrors } from '../http/conventions.js';
import type { BoundPlugin } from '../http/routes.js';
import type { BackgroundJob, JobLog } from '../runtime/jobs.js';

/** Work that runs in every API process (not one per node, as a job does): started when the app is ready, ended before the database closes. */
export interface Lifecycle {
  ready(log: JobLog): void;
  close(): Promise<void>;
}

/**
 * What a module hands the app: every `create<Name>Module` returns an object that `satisfies` this,
 * and app.ts gathers each list from all of them, so a module's job or route cannot be left out by
 * forgetting to name it there. A module adds what it uses to its object; the rest are absent.
 */
export interface ModuleParts {
  readonly name: string;
  /** Routes under /api/v1, behind authentication. */
  readonly routes?: readonly BoundPlugin[];
  /** Routes under /api/v1 that need no authentication (the token endpoints). */
  readonly publicRoutes?: readonly BoundPlugin[];
  /** Routes outside /api/v1, with their own authentication if any (triggers, HIBP, TAXII). */
  readonly siteRoutes?: readonly BoundPlugin[];
  /** Background work, one process per node (see runtime/jobs.ts). */
  readonly jobs?: readonly BackgroundJob[];
  readonly lifecycle?: Lifecycle;
  /** What each of its event types carries, for the OpenAPI document's webhooks. */
  readonly events?: Readonly<Record<string, TSchema>>;
  /** Path prefixes whose unknown paths answer a bare 404 (another API's protocol). */
  readonly bareNotFound?: readonly string[];
  /** Path prefixes whose 404 and 405 answer in another protocol's error format. */
  readonly foreignErrors?: readonly ForeignErrors[];
  /** Paths whose next segment is a secret: the access log keeps only its start. */
  readonly secretPaths?: readonly string[];
}

/** A module as its `create<Name>Module` returns it: its parts, and what it exports for others (its service, ...). */
export type Module = ModuleParts & { readonly [exported: string]: unknown };
