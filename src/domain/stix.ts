import { v5 as uuidv5 } from 'uuid';

/** STIX 2.1 export of an incident: pure, deterministic (same incident, same bundle). */

// Our namespace for STIX ids derived from record ids (uuid v5).
const NAMESPACE = '6b1f3c2e-4f0a-5d7e-9c3b-2a1d0e8f7b64';

// The TLP 2.0 marking definitions published with the STIX 2.1 TLP 2.0 extension.
const TLP_EXTENSION = 'extension-definition--60a3c5c5-0d10-413e-aab3-9e08dde9e88d';
export const TLP_MARKINGS: Record<string, { id: string; name: string }> = {
  clear: { id: 'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487', name: 'TLP:CLEAR' },
  green: { id: 'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb', name: 'TLP:GREEN' },
  amber: { id: 'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421', name: 'TLP:AMBER' },
  'amber+strict': { id: 'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003', name: 'TLP:AMBER+STRICT' },
  red: { id: 'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1', name: 'TLP:RED' },
};

export interface StixIncident {
  id: string;
  version: number;
  title: string;
  description: string;
  tlp: string;
  tags: string[];
  organization: { id: string; name: string };
  created_at: string;
  updated_at: string;
}

export interface StixIoc {
  id: string;
  type: string;
  value: string;
  description: string;
  tlp: string;
  tags: string[];
  first_seen: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export const sid = (kind: string, key: string) => `${kind}--${uuidv5(`${kind}:${key}`, NAMESPACE)}`;

/** A STIX string literal: backslash and single quote escaped. */
export const stixString = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * A URL as an RFC 3986 URI, as STIX's url:value must be: every character a URI may not hold (a
 * backslash, a space, anything beyond ASCII) percent-encoded as its UTF-8 bytes, and a `%` not
 * starting an escape too; what is already valid stays as it is. The stored IOC keeps its value.
 */
export function uriOf(url: string): string {
  return url.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/gu, (c) =>
    [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

/** The STIX pattern for an IOC, or null for types with no observable (cve, other). */
export function stixPattern(type: string, value: string): string | null {
  switch (type) {
    case 'ipv4':
      return `[ipv4-addr:value = ${stixString(value)}]`;
    case 'ipv6':
      return `[ipv6-addr:value = ${stixString(value)}]`;
    case 'cidr':
      return value.includes(':') ? `[ipv6-addr:value = ${stixString(value)}]` : `[ipv4-addr:value = ${stixString(value)}]`;
    case 'domain':
      return `[domain-name:value = ${stixString(value)}]`;
    case 'url':
      return `[url:value = ${stixString(uriOf(value))}]`;
    case 'email':
      return `[email-addr:value = ${stixString(value)}]`;
    case 'md5':
      return `[file:hashes.MD5 = ${stixString(value)}]`;
    case 'sha1':
      return `[file:hashes.'SHA-1' = ${stixString(value)}]`;
    case 'sha256':
      return `[file:hashes.'SHA-256' = ${stixString(value)}]`;
    case 'sha512':
      return `[file:hashes.'SHA-512' = ${stixString(value)}]`;
    case 'filename':
      return `[file:name = ${stixString(value)}]`;
    case 'asn':
      return `[autonomous-system:number = ${Number(value.replace(/^AS/i, ''))}]`;
    default:
      return null;
  }
}

export function marking(tlp: string) {
  const m = TLP_MARKINGS[tlp] ?? TLP_MARKINGS.amber!;
  return {
    type: 'marking-definition',
    spec_version: '2.1',
    id: m.id,
    created: '2022-10-01T00:00:00.000Z',
    name: m.name,
    extensions: { [TLP_EXTENSION]: { extension_type: 'property-extension', tlp_2_0: tlp } },
  };
}

/** The organization as a STIX identity: the creator of what threatmon exports for it. */
export function organizationIdentity(organization: { id: string; name: string }, created: string) {
  return {
    type: 'identity',
    spec_version: '2.1',
    id: sid('identity', organization.id),
    created,
    modified: created,
    name: organization.name,
    identity_class: 'organization',
  };
}

/**
 * The STIX object of one IOC, as the export and the TAXII indicators collection give it: an
 * `indicator` with its pattern (a `vulnerability` for a CVE), one version per change of the IOC
 * (`modified` is its updated_at), or null for the types with no pattern.
 */
export function stixIocObject(ioc: StixIoc, creatorId: string): Record<string, unknown> | null {
  const common = {
    spec_version: '2.1',
    created: ioc.created_at,
    modified: ioc.updated_at,
    created_by_ref: creatorId,
    object_marking_refs: [marking(ioc.tlp).id],
    ...(ioc.tags.length ? { labels: ioc.tags } : {}),
  };
  if (ioc.type === 'cve') {
    return {
      type: 'vulnerability',
      id: sid('vulnerability', ioc.id),
      ...common,
      name: ioc.value,
      ...(ioc.description ? { description: ioc.description } : {}),
      external_references: [{ source_name: 'cve', external_id: ioc.value }],
    };
  }
  const pattern = stixPattern(ioc.type, ioc.value);
  if (!pattern) return null;
  return {
    type: 'indicator',
    id: sid('indicator', ioc.id),
    ...common,
    name: `${ioc.type}: ${ioc.value}`,
    ...(ioc.description ? { description: ioc.description } : {}),
    indicator_types: ['malicious-activity'],
    pattern,
    pattern_type: 'stix',
    pattern_version: '2.1',
    valid_from: ioc.first_seen ?? ioc.created_at,
    ...(ioc.expires_at ? { valid_until: ioc.expires_at } : {}),
  };
}

export function stixBundle(incident: StixIncident, iocs: StixIoc[]) {
  const identity = organizationIdentity(incident.organization, incident.created_at);
  const markings = new Map<string, ReturnType<typeof marking>>();
  const markingRef = (tlp: string) => {
    const m = marking(tlp);
    markings.set(m.id, m);
    return [m.id];
  };
  const objects: Record<string, unknown>[] = [];
  const leftOut: string[] = [];
  for (const ioc of iocs) {
    const object = stixIocObject(ioc, identity.id);
    if (!object) {
      leftOut.push(ioc.value);
      continue;
    }
    markingRef(ioc.tlp);
    objects.push(object);
  }
  let description = incident.description;
  if (leftOut.length) {
    description = `${description}${description ? '\n\n' : ''}IOCs of type "other", not expressible as STIX patterns: ${leftOut.join('; ')}`;
  }
  const report = {
    type: 'report',
    spec_version: '2.1',
    id: sid('report', incident.id),
    created: incident.created_at,
    modified: incident.updated_at,
    created_by_ref: identity.id,
    name: incident.title,
    ...(description ? { description } : {}),
    report_types: ['threat-report'],
    published: incident.updated_at,
    object_refs: objects.length ? objects.map((o) => o.id as string) : [identity.id],
    object_marking_refs: markingRef(incident.tlp),
    ...(incident.tags.length ? { labels: incident.tags } : {}),
  };
  return {
    type: 'bundle' as const,
    id: sid('bundle', `${incident.id}:${incident.version}`),
    objects: [report, identity, ...objects, ...markings.values()] as Record<string, unknown>[],
  };
}

/** Whether something of this TLP may leave threatmon (a TAXII collection, a webhook, a channel): TLP:RED never does. */
export const mayLeave = (marked: { tlp: string | null }) => marked.tlp !== 'red';
