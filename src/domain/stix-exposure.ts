import { v5 as uuidv5 } from 'uuid';
import { marking, organizationIdentity, sid } from './stix.js';

/**
 * threatmon's STIX 2.1 profile for leak exposures (docs/STIX.md): a monitoring alert as a
 * `sighting` of the organization's identity, `where_sighted` the leak source (an identity of its
 * own), with an `observed-data` holding the leaked account's observables. Pure and deterministic:
 * the same alert gives the same ids; a changed alert gives a new version of its sighting.
 */

// STIX 2.1 section 2.9: the namespace of the deterministic ids of cyber-observable objects.
const SCO_NAMESPACE = '00abedb4-aa42-466c-9c01-fed23315a9b7';

/** The fields of an alert (as the API shows it) that the profile uses. */
export interface StixAlert {
  id: string;
  monitor: { id: string; name: string };
  severity: string;
  status: string;
  matched_term: string;
  matched_field: string;
  incident: string | null;
  created_at: string;
  updated_at: string;
  leak_record: {
    id: string;
    source: { id: string; name: string };
    email: string | null;
    username: string | null;
    domain: string | null;
    ip: string | null;
    has_password: boolean;
    leaked_at: string | null;
  };
}

/** A cyber-observable's id as STIX 2.1 derives it: UUIDv5 of its id-contributing properties (JCS). */
export function observableId(type: string, contributing: Record<string, string>): string {
  const canonical = JSON.stringify(Object.fromEntries(Object.entries(contributing).sort(([a], [b]) => (a < b ? -1 : 1))));
  return `${type}--${uuidv5(canonical, SCO_NAMESPACE)}`;
}

/** The observables of a leak record: its e-mail, login, domain and address, each once. */
export function recordObservables(record: StixAlert['leak_record']): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const add = (type: string, props: Record<string, string>) => out.push({ type, spec_version: '2.1', id: observableId(type, props), ...props });
  if (record.email) add('email-addr', { value: record.email });
  if (record.username) add('user-account', { account_login: record.username });
  if (record.domain) add('domain-name', { value: record.domain });
  if (record.ip) add(record.ip.includes(':') ? 'ipv6-addr' : 'ipv4-addr', { value: record.ip });
  return out;
}

/** A leak source as a STIX identity: where the exposure was sighted. */
export function sourceIdentity(source: { id: string; name: string }, created: string, creatorId: string) {
  return {
    type: 'identity',
    spec_version: '2.1',
    id: sid('identity', `leak-source:${source.id}`),
    created,
    modified: created,
    created_by_ref: creatorId,
    name: source.name,
    description: 'A leak source of threatmon: a breach, combolist or stealer-log collection.',
    identity_class: 'unknown',
  };
}

/**
 * The objects of one alert, those it shares with other alerts (identities, observables, the TLP
 * marking) first: each object a reader needs is given no later than the objects that refer to it.
 * `modified` is the alert's updated_at: the caller makes it grow with every version.
 */
export function exposureObjects(alert: StixAlert, organization: { id: string; name: string; created_at: string }, modified: string) {
  const creator = organizationIdentity(organization, organization.created_at);
  const tlp = marking('amber');
  const source = sourceIdentity(alert.leak_record.source, alert.created_at, creator.id);
  const observables = recordObservables(alert.leak_record);
  const common = { spec_version: '2.1', created_by_ref: creator.id, object_marking_refs: [tlp.id] };
  const seen = alert.leak_record.leaked_at ?? alert.created_at;
  const observed = observables.length
    ? {
        type: 'observed-data',
        id: sid('observed-data', alert.id),
        ...common,
        created: alert.created_at,
        modified: alert.created_at,
        first_observed: seen,
        last_observed: seen,
        number_observed: 1,
        object_refs: observables.map((o) => o.id as string),
      }
    : null;
  const sighting = {
    type: 'sighting',
    id: sid('sighting', alert.id),
    ...common,
    created: alert.created_at,
    modified,
    description: `${alert.monitor.name}: ${alert.matched_field} ${alert.matched_term} found in ${alert.leak_record.source.name}.`,
    first_seen: alert.created_at,
    last_seen: alert.created_at,
    count: 1,
    sighting_of_ref: creator.id,
    ...(observed ? { observed_data_refs: [observed.id] } : {}),
    where_sighted_refs: [source.id],
    x_threatmon_alert_id: alert.id,
    x_threatmon_monitor_id: alert.monitor.id,
    x_threatmon_monitor_name: alert.monitor.name,
    x_threatmon_matched_field: alert.matched_field,
    x_threatmon_matched_term: alert.matched_term,
    x_threatmon_severity: alert.severity,
    x_threatmon_status: alert.status,
    x_threatmon_has_password: alert.leak_record.has_password,
    ...(alert.incident ? { x_threatmon_incident_id: alert.incident } : {}),
  };
  return { shared: [tlp, creator, source, ...observables] as Record<string, unknown>[], own: [...(observed ? [observed] : []), sighting] as Record<string, unknown>[] };
}
