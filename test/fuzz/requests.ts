import fc from 'fast-check';

/**
 * Requests for any operation of the OpenAPI document: bodies, path ids and query strings drawn from
 * the documented schemas, mixed with hostile inputs a client can send (deep nesting, huge and
 * negative numbers, 1e308, long strings, NUL, lone surrogates, invalid UTF-8, __proto__ and
 * constructor keys, wrong types, wrong content types, empty and oversized bodies).
 */

type Schema = Record<string, any>;
export interface Operation {
  method: string;
  path: string;
  params: Array<{ name: string; in: string; schema?: Schema }>;
  body?: Schema;
  authenticated: boolean;
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  auth: 'token' | 'none' | 'garbage';
}

export function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      ops.push({
        method: method.toUpperCase(),
        path,
        params: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
        authenticated: Array.isArray(op.security) && op.security.length > 0,
      });
    }
  }
  return ops;
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  'x'.repeat(5000),
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '__proto__',
  'constructor',
  '../../etc/passwd',
  "' or 1=1 --",
  '%00',
  '\u202e\u0301',
  '😀'.repeat(300),
];
const HOSTILE_NUMBERS = [0, -1, -0, 1e308, -1e308, 2 ** 63, 2 ** 53 + 1, 1e20, 0.5, Number.MIN_VALUE];
const HOSTILE_QUERY = ['99999999999999999999', '9223372036854775808', '-1', '0', '1e308', 'NaN', 'Infinity', '1.5', 'true', 'x'.repeat(3000), '%00', '%ED%A0%80', '%FF%FE', '%', '2020-13-45', ',,,', '-', '__proto__'];

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.constantFrom(...HOSTILE_NUMBERS),
  fc.constantFrom(null, true, false, [], {}, [[[]]], { __proto__: { admin: true } }, JSON.parse('{"__proto__": {"x": 1}}'), { constructor: { prototype: {} } }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.double(),
  fc.jsonValue({ maxDepth: 3 }),
);

function resolve(schema: Schema, doc: Schema): Schema {
  let s = schema;
  for (let i = 0; i < 10 && s?.$ref; i++) {
    const parts = String(s.$ref).replace(/^#\//, '').split('/');
    s = parts.reduce((o: any, p) => o?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return s ?? {};
}

/** Values valid (mostly) for `schema`; depth-bounded. */
export function fromSchema(schema: Schema | undefined, doc: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema ?? {}, doc);
  if (depth > 4) return fc.constant(null);
  if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
  if (s.const !== undefined) return fc.constant(s.const);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return fc.oneof(...(alternatives as Schema[]).map((a) => fromSchema(a, doc, depth + 1)));
  if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).map((type) => fromSchema({ ...s, type }, doc, depth)));
  switch (s.type) {
    case 'string': {
      if (s.format === 'uuid') return fc.uuid();
      if (s.format === 'date-time') return fc.date({ noInvalidDate: true, min: new Date('1970-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString());
      if (s.format === 'date') return fc.date({ noInvalidDate: true, min: new Date('1970-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString().slice(0, 10));
      if (s.format === 'email') return fc.emailAddress();
      if (s.pattern) {
        try {
          return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? 1000));
        } catch {
          // A pattern fast-check cannot generate from: plain strings.
        }
      }
      return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 30, 30) });
    }
    case 'integer':
      return fc.integer({ min: Math.max(s.minimum ?? -1000, -(2 ** 31)), max: Math.min(s.maximum ?? 1000, 2 ** 31) });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fromSchema(s.items, doc, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) });
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set<string>(s.required ?? []);
      const record = fc.record(
        Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromSchema(v, doc, depth + 1)])),
        { requiredKeys: [...required].filter((k) => k in props) },
      );
      return Object.keys(props).length ? record : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A body valid for `schema`, or one field of it, or the whole, made hostile. */
function bodyValue(schema: Schema | undefined, doc: Schema): fc.Arbitrary<unknown> {
  const valid = fromSchema(schema, doc);
  const withHostileField = fc
    .tuple(valid, fc.string({ maxLength: 12 }), hostileValue, fc.boolean())
    .map(([v, key, bad, known]) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return bad;
      const keys = Object.keys(v);
      const target = known && keys.length ? (keys[key.length % keys.length] as string) : key;
      return { ...(v as object), [target]: bad };
    });
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 3, arbitrary: withHostileField }, { weight: 1, arbitrary: hostileValue });
}

/** Raw bodies no schema describes: broken encodings and sizes, nesting past any stack. */
const rawBody: fc.Arbitrary<{ payload: string | Buffer; type?: string }> = fc.oneof(
  fc.constant({ payload: '' }),
  fc.constant({ payload: `{"a":${'['.repeat(20000)}${']'.repeat(20000)}}` }),
  fc.constant({ payload: `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}` }),
  fc.constant({ payload: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]) }),
  fc.constant({ payload: Buffer.from([0xff, 0xfe, 0x7b, 0x7d]) }),
  fc.constant({ payload: '{"a": "\\ud800"}' }),
  fc.constant({ payload: `{"x": "${'y'.repeat(1_100_000)}"}` }),
  fc.constant({ payload: '{"a": 1,' }),
  fc.constant({ payload: 'null' }),
  fc.constant({ payload: '[]' }),
  fc.constant({ payload: '{"__proto__": {"is_staff": true}}' }),
  fc.constant({ payload: '{"constructor": {"prototype": {"x": 1}}}' }),
  fc.constant({ payload: 'a=1&b=2', type: 'application/x-www-form-urlencoded' }),
  fc.constant({ payload: '<x/>', type: 'application/xml' }),
  fc.constant({ payload: '{}', type: 'text/plain' }),
  fc.constant({ payload: '{}', type: 'application/json; charset=latin1' }),
  fc.constant({ payload: '{}', type: 'multipart/form-data; boundary=x' }),
  fc.constant({ payload: '{"email": "a@b.example"}\n{bad\n', type: 'application/x-ndjson' }),
);

/** Path parameter values: a known record's id, any UUID, or something that is not one. */
function pathValue(name: string, known: Record<string, string[]>): fc.Arbitrary<string> {
  const ids = known[name] ?? known.id ?? [];
  return fc.oneof(
    { weight: 4, arbitrary: ids.length ? fc.constantFrom(...ids) : fc.uuid() },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom('not-a-uuid', '0', '%00', '..', 'x'.repeat(600), '00000000-0000-0000-0000-000000000000', 'ABCDE', 'abcde', '%ED%A0%80') },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => encodeURIComponent(s) || 'x') },
  );
}

function queryValue(schema: Schema | undefined, doc: Schema): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fromSchema(schema, doc).map((v) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v) ?? '')) },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_QUERY) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map((s) => encodeURIComponent(s)) },
  );
}

export function requestFor(op: Operation, doc: Schema, known: Record<string, string[]>): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const path = fc.tuple(...pathParams.map((p) => pathValue(p.name, known))).map((values) => {
    let url = op.path;
    pathParams.forEach((p, i) => {
      url = url.replace(`{${p.name}}`, values[i] as string);
    });
    return url;
  });
  const query = fc
    .subarray(queryParams, { maxLength: Math.min(4, queryParams.length) })
    .chain((chosen) =>
      fc.tuple(
        ...chosen.map((p) => queryValue(p.schema, doc).map((v) => `${p.name}=${v}`)),
        fc.constantFrom('', 'unknown=1', 'page=1&page=2', '__proto__=1', 'ordering=-nope'),
      ),
    )
    .map((parts) => parts.filter(Boolean).join('&'));
  const takesBody = ['POST', 'PUT', 'PATCH'].includes(op.method);
  const body: fc.Arbitrary<{ payload?: string | Buffer; type?: string }> = takesBody
    ? fc.oneof(
        { weight: 4, arbitrary: bodyValue(op.body, doc).map((v) => ({ payload: JSON.stringify(v) ?? 'null' })) },
        { weight: 1, arbitrary: rawBody },
      )
    : fc.constant({});
  const auth = op.authenticated ? fc.constantFrom<FuzzRequest['auth']>('token', 'token', 'token', 'token', 'none', 'garbage') : fc.constant<FuzzRequest['auth']>('none');
  return fc.record({ path, query, body, auth }).map(({ path: p, query: q, body: b, auth: a }) => ({
    method: op.method,
    url: q ? `${p}?${q}` : p,
    headers: (b.payload !== undefined ? { 'content-type': b.type ?? 'application/json' } : {}) as Record<string, string>,
    ...(b.payload !== undefined ? { payload: b.payload } : {}),
    auth: a,
  }));
}
