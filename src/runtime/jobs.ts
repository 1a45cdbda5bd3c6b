/** Where a background job reports what went wrong (the app's logger). */
export interface JobLog {
  error: (obj: object, msg: string) => void;
}

/**
 * Work a module does in the background of `threatmon serve` (scans, deliveries): started in one
 * process per node, stopped before the database closes. Each job claims its work in the database,
 * so nodes sharing one PostgreSQL never do the same piece twice.
 */
export interface BackgroundJob {
  name: string;
  start: (log: JobLog) => void;
  stop: () => Promise<void>;
}
