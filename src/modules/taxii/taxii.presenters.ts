import { formatUs } from './taxii.query.js';
import type { StoredObject } from './taxii.repository.js';
import { STIX_MEDIA, TAXII_MEDIA } from './taxii.schemas.js';
import type { TaxiiService } from './taxii.service.js';

/** TAXII's resources as this server answers them (TAXII 2.1 sections 4-5), as JSON text or values. */

export const presentDiscovery = (rootUrl: string) => ({ title: 'threatmon TAXII 2.1', description: 'Indicators and leak exposures of your organization, read-only.', default: rootUrl, api_roots: [rootUrl] });

export const presentApiRoot = (organization: { name: string }, maxContentLength: number) => ({
  title: organization.name,
  description: `The TAXII collections of ${organization.name}.`,
  versions: [TAXII_MEDIA],
  max_content_length: maxContentLength,
});

export const presentCollection = (c: Awaited<ReturnType<TaxiiService['collections']>>[number]) => ({ id: c.id, title: c.title, description: c.description, can_read: true, can_write: false, media_types: [STIX_MEDIA] });

/** A version's name: its `modified` (or `created`), else when it was added. */
export const versionOf = (r: StoredObject) => r.version || formatUs(r.added_us);

/** The objects of a page as a JSON array: each kept as its text, not parsed again. */
export const objectsJson = (rows: StoredObject[]) => `[${rows.map((r) => r.object).join(',')}]`;

export const manifestJson = (rows: StoredObject[]) => JSON.stringify(rows.map((r) => ({ id: r.stix_id, date_added: formatUs(r.added_us), version: versionOf(r), media_type: STIX_MEDIA })));
