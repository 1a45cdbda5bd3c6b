import { Listing } from '../../db/listing.js';
import { MONITOR_TYPES } from '../../domain/monitor-terms.js';
import { ALERT_STATUSES, MONITOR_STATUSES, SEVERITIES } from './monitoring.schemas.js';

/** The monitoring module's lists: the filters, search and orderings of each. */

export const monitorListing = new Listing({
  filters: {
    type: { kind: 'enum', column: 'monitors.type', values: MONITOR_TYPES, description: 'Only monitors of these types.' },
    status: { kind: 'enum', column: 'monitors.status', values: MONITOR_STATUSES, description: 'Only monitors in these states.' },
    severity: { kind: 'enum', column: 'monitors.severity', values: SEVERITIES, description: 'Only monitors of these severities.' },
  },
  search: ['monitors.name', 'monitors.terms'],
  ordering: { created_at: 'monitors.created_at', updated_at: 'monitors.updated_at', name: 'monitors.name' },
  idColumn: 'monitors.id',
  createdColumn: 'monitors.created_at',
  updatedColumn: 'monitors.updated_at',
});

export const alertListing = new Listing({
  filters: {
    monitor: { kind: 'uuid', column: 'monitor_alerts.monitor_id', description: 'Only the alerts of this monitor.' },
    status: { kind: 'enum', column: 'monitor_alerts.status', values: ALERT_STATUSES, description: 'Only alerts in these states.' },
    severity: { kind: 'enum', column: 'monitor_alerts.severity', values: SEVERITIES, description: 'Only alerts of these severities.' },
  },
  search: ['monitor_alerts.matched_term', 'monitor_alerts.note'],
  ordering: { created_at: 'monitor_alerts.created_at', updated_at: 'monitor_alerts.updated_at' },
  idColumn: 'monitor_alerts.id',
  createdColumn: 'monitor_alerts.created_at',
  updatedColumn: 'monitor_alerts.updated_at',
});

export const scanListing = new Listing({
  filters: {},
  ordering: { created_at: 'monitor_scans.created_at' },
  idColumn: 'monitor_scans.id',
  createdColumn: 'monitor_scans.created_at',
});
