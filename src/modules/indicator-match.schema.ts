import { type Static, Type } from 'typebox';

// Beside hooks.ts: the shape of the `indicators.match` answer as the API shows it, used by every
// module that shows a match (feeds, tracking tokens, leaks), owned by none of them.

export const TLPS = ['clear', 'green', 'amber', 'amber+strict', 'red'] as const;

/** An indicator naming what was seen, as an exposure, a leak record or an event carries it. */
export const IndicatorMatchSchema = Type.Object(
  {
    indicator: Type.String({ format: 'uuid', description: 'The indicator (GET /indicators/<id>/).' }),
    type: Type.String({ description: 'Its type.' }),
    value: Type.String({ description: 'Its value.' }),
    field: Type.Enum(['ip', 'url', 'host', 'user_agent'], { type: 'string', description: 'What it named: the address, the URL, the URL\'s host (a domain indicator names its subdomains; an address indicator an address host), the user agent.' }),
    feeds: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }), { description: 'The feeds that gave it.' }),
    confidence: Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()]),
    tlp: Type.Union([Type.Enum(TLPS, { type: 'string' }), Type.Null()]),
  },
  { title: 'IndicatorMatch' },
);
export type IndicatorMatchOut = Static<typeof IndicatorMatchSchema>;
