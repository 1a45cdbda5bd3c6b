import { Type } from 'typebox';

/** The collections every organization has: its incidents' IOCs, and its alerts as exposures. */
export const COLLECTION_KINDS = ['indicators', 'exposures'] as const;
export type CollectionKind = (typeof COLLECTION_KINDS)[number];

/** TAXII 2.1's resources (OASIS TAXII 2.1, section 4-5), as this server answers them. */

export const TAXII_MEDIA = 'application/taxii+json;version=2.1';
export const STIX_MEDIA = 'application/stix+json;version=2.1';

const Url = (description: string) => Type.String({ format: 'uri', description });

export const DiscoverySchema = Type.Object(
  {
    title: Type.String(),
    description: Type.String(),
    contact: Type.Optional(Type.String()),
    default: Url("The caller's API root."),
    api_roots: Type.Array(Url('An API root.'), { description: "The API roots the caller may read: its organization's." }),
  },
  { title: 'TaxiiDiscovery' },
);

export const ApiRootSchema = Type.Object(
  {
    title: Type.String({ description: "The organization's name." }),
    description: Type.String(),
    versions: Type.Array(Type.String(), { description: 'application/taxii+json;version=2.1' }),
    max_content_length: Type.Integer({ description: 'The largest request body taken, in bytes (the collections are read-only).' }),
  },
  { title: 'TaxiiApiRoot' },
);

export const CollectionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'A UUIDv4 that never changes.' }),
    title: Type.String(),
    description: Type.String(),
    can_read: Type.Boolean(),
    can_write: Type.Boolean({ description: 'Always false: threatmon writes these collections itself.' }),
    media_types: Type.Array(Type.String()),
  },
  { title: 'TaxiiCollection' },
);

export const CollectionsSchema = Type.Object({ collections: Type.Optional(Type.Array(CollectionSchema)) }, { title: 'TaxiiCollections' });

export const EnvelopeSchema = Type.Object(
  {
    more: Type.Boolean({ description: 'Whether more objects match: ask again with next (or added_after set to X-TAXII-Date-Added-Last).' }),
    next: Type.Optional(Type.String({ description: 'Where the next page starts: pass it as next= with the same filters.' })),
    objects: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown(), { description: 'A STIX 2.1 object.' }))),
  },
  { title: 'TaxiiEnvelope' },
);

export const ManifestSchema = Type.Object(
  {
    more: Type.Boolean(),
    next: Type.Optional(Type.String()),
    objects: Type.Optional(
      Type.Array(
        Type.Object({
          id: Type.String({ description: 'STIX id.' }),
          date_added: Type.String({ description: 'When this version was added to the collection (microseconds, unique in the collection).' }),
          version: Type.String({ description: "The object's modified (or created) timestamp; its date_added for an observable, which has neither." }),
          media_type: Type.String(),
        }),
      ),
    ),
  },
  { title: 'TaxiiManifest' },
);

export const VersionsSchema = Type.Object(
  { more: Type.Boolean(), next: Type.Optional(Type.String()), versions: Type.Optional(Type.Array(Type.String())) },
  { title: 'TaxiiVersions' },
);

export const TaxiiErrorSchema = Type.Object(
  {
    title: Type.String(),
    description: Type.Optional(Type.String()),
    error_id: Type.Optional(Type.String({ description: 'The request id (also in X-Request-Id).' })),
    error_code: Type.Optional(Type.String({ description: "threatmon's error code (as in problem+json)." })),
    http_status: Type.Optional(Type.String()),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: 'TaxiiError' },
);

const List = (description: string) => Type.Optional(Type.String({ description }));

export const ObjectsQuerySchema = Type.Object({
  added_after: List('Only objects added after this RFC 3339 timestamp (exclusive; date_added has microseconds and is unique in a collection).'),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Objects per page, 1-1000 (default and most: 1000).' })),
  next: List('The next value of the previous page.'),
  'match[id]': List('STIX ids, comma-separated.'),
  'match[type]': List('STIX types, comma-separated.'),
  'match[version]': List('first, last (default), all, or exact versions (timestamps), comma-separated.'),
  'match[spec_version]': List('2.1 (every object here is STIX 2.1), comma-separated.'),
});

export const CollectionParams = Type.Object({ root: Type.String(), collection: Type.String() });
export const ObjectParams = Type.Object({ root: Type.String(), collection: Type.String(), object: Type.String() });

/** The most objects a page holds (and the default). */
export const MAX_PAGE = 1000;
