/**
 * What the OASIS STIX 2.1 JSON schemas (oasis-open/cti-stix2-json-schemas, schemas/) require of the
 * object types threatmon writes, written out from reading them: common/core.json and
 * cyber-observable-core.json, identifier.json, timestamp.json, properties.json (custom properties),
 * sdos/indicator, identity, observed-data, vulnerability, sros/sighting, common/marking-definition,
 * observables/email-addr, domain-name, user-account, ipv4-addr, ipv6-addr. Returns the problems
 * found; [] for a valid object.
 */

const IDENTIFIER = /^[a-z][a-z0-9-]+[a-z0-9]--[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-5][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;
const TIMESTAMP = /^[0-9]{4}-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]|60)(\.[0-9]+)?Z$/;
const MILLIS = /T\d{2}:\d{2}:\d{2}\.\d{3,}Z$/;
const TYPE = /^([a-z][a-z0-9]*)+(-[a-z0-9]+)*-?$/;
const CUSTOM = /^[a-z][a-z0-9_]{2,249}$/;
const IPV4 = /^(([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])\.){3}([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])(\/(3[0-2]|[1-2][0-9]|[0-9]))?$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const IDENTITY_CLASSES = ['individual', 'group', 'system', 'organization', 'class', 'unknown'];
const INDICATOR_TYPES = ['anomalous-activity', 'anonymization', 'benign', 'compromised', 'malicious-activity', 'attribution', 'unknown'];

const SDO_PROPS = ['type', 'spec_version', 'id', 'created_by_ref', 'labels', 'created', 'modified', 'revoked', 'confidence', 'lang', 'external_references', 'object_marking_refs', 'granular_markings', 'extensions'];
const TYPE_PROPS: Record<string, string[]> = {
  indicator: ['name', 'description', 'indicator_types', 'pattern', 'pattern_type', 'pattern_version', 'valid_from', 'valid_until', 'kill_chain_phases'],
  identity: ['name', 'description', 'roles', 'identity_class', 'sectors', 'contact_information'],
  vulnerability: ['name', 'description'],
  'observed-data': ['first_observed', 'last_observed', 'number_observed', 'objects', 'object_refs'],
  sighting: ['description', 'first_seen', 'last_seen', 'count', 'sighting_of_ref', 'observed_data_refs', 'where_sighted_refs', 'summary'],
  'marking-definition': ['type', 'spec_version', 'id', 'created_by_ref', 'created', 'definition_type', 'definition', 'name', 'object_marking_refs', 'granular_markings', 'extensions'],
  'email-addr': ['value', 'display_name', 'belongs_to_ref'],
  'domain-name': ['value', 'resolves_to_refs'],
  'user-account': ['user_id', 'credential', 'account_login', 'account_type', 'display_name', 'is_service_account', 'is_privileged', 'can_escalate_privs', 'is_disabled', 'account_created', 'account_expires'],
  'ipv4-addr': ['value', 'resolves_to_refs', 'belongs_to_refs'],
  'ipv6-addr': ['value', 'resolves_to_refs', 'belongs_to_refs'],
};
const OBSERVABLES = ['email-addr', 'domain-name', 'user-account', 'ipv4-addr', 'ipv6-addr'];
const SCO_PROPS = ['type', 'spec_version', 'id', 'object_marking_refs', 'granular_markings', 'defanged', 'extensions'];

export function stixProblems(o: Record<string, unknown>): string[] {
  const out: string[] = [];
  const type = String(o.type);
  const need = (cond: boolean, what: string) => {
    if (!cond) out.push(`${type} ${String(o.id)}: ${what}`);
  };
  const ts = (k: string, millis = false) => {
    if (o[k] === undefined) return;
    need(typeof o[k] === 'string' && TIMESTAMP.test(o[k] as string), `${k} is not a STIX timestamp`);
    if (millis) need(MILLIS.test(String(o[k])), `${k} lacks millisecond precision`);
  };
  const ref = (v: unknown, prefix?: RegExp) => typeof v === 'string' && IDENTIFIER.test(v) && (!prefix || prefix.test(v));
  const refs = (k: string, prefix?: RegExp) => {
    if (o[k] === undefined) return;
    need(Array.isArray(o[k]) && (o[k] as unknown[]).length >= 1 && (o[k] as unknown[]).every((v) => ref(v, prefix)), `${k} must be a non-empty list of identifiers${prefix ? ` (${prefix})` : ''}`);
  };
  need(TYPE.test(type) && type.length >= 3, 'type');
  need(ref(o.id) && String(o.id).startsWith(`${type}--`), 'id must be <type>--<UUID>');
  need(o.spec_version === '2.1', 'spec_version must be 2.1');
  const known = TYPE_PROPS[type];
  need(known !== undefined, 'a type this check does not know');
  const sco = OBSERVABLES.includes(type);
  const allowed = new Set([...(sco ? SCO_PROPS : SDO_PROPS), ...(known ?? [])]);
  for (const k of Object.keys(o)) {
    if (allowed.has(k)) continue;
    // properties.json: a custom property is named [a-z][a-z0-9_]{2,249} and holds a scalar or a non-empty list.
    need(CUSTOM.test(k) && (['string', 'number', 'boolean'].includes(typeof o[k]) || (Array.isArray(o[k]) && (o[k] as unknown[]).length > 0)), `property ${k} is neither defined nor a valid custom property`);
  }
  if (!sco && type !== 'marking-definition') {
    need(o.created !== undefined && o.modified !== undefined, 'created and modified are required');
    ts('created', true);
    ts('modified', true);
    need(String(o.modified) >= String(o.created), 'modified is before created');
  }
  if (sco) need(o.created === undefined && o.modified === undefined, 'an observable has no created/modified');
  if (o.created_by_ref !== undefined) need(ref(o.created_by_ref, /^identity--/), 'created_by_ref must be an identity');
  refs('object_marking_refs', /^marking-definition--/);
  if (o.labels !== undefined) need(Array.isArray(o.labels) && (o.labels as unknown[]).length > 0, 'labels must be non-empty');
  switch (type) {
    case 'indicator':
      need(typeof o.pattern === 'string' && /^\[.+\]$/.test(o.pattern as string), 'pattern');
      need(o.pattern_type === 'stix', 'pattern_type');
      need(o.valid_from !== undefined, 'valid_from is required');
      ts('valid_from');
      ts('valid_until');
      if (o.valid_until !== undefined) need(Date.parse(String(o.valid_until)) > Date.parse(String(o.valid_from)), 'valid_until must be later than valid_from');
      if (o.indicator_types !== undefined) need((o.indicator_types as string[]).every((t) => INDICATOR_TYPES.includes(t)), 'indicator_types');
      break;
    case 'identity':
      need(typeof o.name === 'string', 'name is required');
      if (o.identity_class !== undefined) need(IDENTITY_CLASSES.includes(String(o.identity_class)), 'identity_class');
      break;
    case 'vulnerability':
      need(typeof o.name === 'string', 'name is required');
      break;
    case 'observed-data':
      ts('first_observed');
      ts('last_observed');
      need(Number.isInteger(o.number_observed) && (o.number_observed as number) >= 1 && (o.number_observed as number) <= 999_999_999, 'number_observed');
      need(o.objects !== undefined || o.object_refs !== undefined, 'objects or object_refs is required');
      refs('object_refs');
      break;
    case 'sighting':
      need(ref(o.sighting_of_ref) && !/^(sighting|relationship|bundle|marking-definition|language-content)--/.test(String(o.sighting_of_ref)), 'sighting_of_ref');
      refs('observed_data_refs', /^observed-data--/);
      refs('where_sighted_refs', /^(identity|location)--/);
      ts('first_seen');
      ts('last_seen');
      if (o.count !== undefined) need(Number.isInteger(o.count) && (o.count as number) >= 0 && (o.count as number) <= 999_999_999, 'count');
      break;
    case 'marking-definition':
      ts('created', true);
      need(o.definition_type !== undefined || o.extensions !== undefined, 'definition_type or extensions');
      break;
    case 'email-addr':
      need(typeof o.value === 'string' && EMAIL.test(o.value as string), 'value must be an e-mail address');
      break;
    case 'domain-name':
      need(typeof o.value === 'string' && HOSTNAME.test(o.value as string), 'value must be a host name');
      break;
    case 'ipv4-addr':
      need(typeof o.value === 'string' && IPV4.test(o.value as string), 'value must be an IPv4 address');
      break;
    case 'ipv6-addr':
      need(typeof o.value === 'string', 'value is required');
      break;
    case 'user-account':
      need(['user_id', 'account_login', 'account_type'].some((k) => typeof o[k] === 'string'), 'an id-contributing property');
      break;
  }
  return out;
}
