import { escapeLike, Listing } from '../../db/listing.js';
import { badQuery } from '../../http/list-query.js';
import { isUuid } from '../../http/schemas.js';
import { SEVERITIES, STATUSES, TLPS } from './incidents.schemas.js';
import { IOC_TYPES, normaliseIoc } from '../../domain/ioc.js';

/** The incidents module's lists: filters, search and ordering of each. */

const tagFilter = (qb: any, value: unknown) => qb.where('tags', 'like', `%${escapeLike(JSON.stringify(String(value)))}%`);
/** assignee=: a user id, `me` (parsed to the caller's id) or `none` (null). */
const NO_ASSIGNEE = null;

export const incidentListing = new Listing({
  filters: {
    status: { kind: 'enum', column: 'status', values: STATUSES, description: 'Only these statuses.' },
    severity: { kind: 'enum', column: 'severity', values: SEVERITIES, description: 'Only these severities.' },
    tlp: { kind: 'enum', column: 'tlp', values: TLPS, description: 'Only these TLP markings.' },
    assignee: {
      kind: 'custom',
      schema: { type: 'string', description: 'A user id, `me` (the caller) or `none` (unassigned).' } as never,
      parse: (value, _query, caller): string | null => {
        const v = String(value);
        if (v === 'none') return NO_ASSIGNEE;
        if (v === 'me') return caller ?? '';
        if (!isUuid(v)) throw badQuery('assignee', 'must be a user id, me or none');
        return v.toLowerCase();
      },
      where: (qb, id: string | null) => (id === NO_ASSIGNEE ? qb.where('assignee_id', 'is', null) : qb.where('assignee_id', '=', id)),
    },
    tag: { kind: 'custom', schema: { type: 'string', maxLength: 100, description: 'Only incidents carrying this tag (exact).' } as never, where: tagFilter },
  },
  search: ['title', 'description'],
  ordering: { created_at: 'created_at', updated_at: 'updated_at', severity: 'severity_rank', status: 'status', title: 'title' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});

export const iocListing = new Listing({
  filters: {
    type: { kind: 'enum', column: 'type', values: IOC_TYPES, description: 'Only these IOC types.' },
    tlp: { kind: 'enum', column: 'tlp', values: TLPS, description: 'Only these TLP markings.' },
    tag: { kind: 'custom', schema: { type: 'string', maxLength: 100, description: 'Only IOCs carrying this tag (exact).' } as never, where: tagFilter },
  },
  search: ['value', 'description'],
  ordering: { created_at: 'created_at', type: 'type', value: 'value' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});

export const correlationListing = new Listing({
  filters: {
    type: { kind: 'enum', column: 'iocs.type', values: IOC_TYPES, description: 'Only these IOC types.' },
    value: {
      kind: 'custom',
      schema: { type: 'string', maxLength: 4096, description: 'Exact value after normalising (defanged input accepted); with `type`, normalised as that type.' } as never,
      // The value as each IOC type normalises it (itself when none does).
      parse: (value): string[] => {
        const raw = String(value);
        const candidates = new Set<string>();
        for (const t of IOC_TYPES) {
          const n = normaliseIoc(t, raw);
          if (n.ok) candidates.add(n.value);
        }
        return candidates.size ? [...candidates] : [raw];
      },
      where: (qb, values: string[]) => qb.where('iocs.value', 'in', values),
    },
    incident_status: { kind: 'enum', column: 'incidents.status', values: STATUSES, description: 'Only IOCs of incidents in these statuses.' },
  },
  search: ['iocs.value', 'iocs.description'],
  ordering: { created_at: 'iocs.created_at', value: 'iocs.value', type: 'iocs.type' },
  idColumn: 'iocs.id',
  createdColumn: 'iocs.created_at',
});

export const eventListing = new Listing({
  filters: { kind: { kind: 'enum', column: 'kind', values: ['created', 'updated', 'ioc_added', 'ioc_removed', 'comment_added', 'alert_merged'], description: 'Only these kinds.' } },
  ordering: { created_at: 'created_at' },
  idColumn: 'id',
  createdColumn: 'created_at',
});

export const commentListing = new Listing({
  search: ['body'],
  ordering: { created_at: 'created_at' },
  idColumn: 'id',
  createdColumn: 'created_at',
});

/** TypeBox's errors in the shape of the API's field errors (its unknown-property errors come as `boolean`). */
