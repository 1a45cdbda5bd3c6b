/**
 * The database as Kysely types it. Each module declares its own tables beside its code
 * (`modules/<name>/<name>.tables.ts`) and adds them here by declaration merging, so a table's type
 * lives with the module that owns it and db/ imports no module.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by each module's tables file
export interface DB {}
