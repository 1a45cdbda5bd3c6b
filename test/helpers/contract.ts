import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { CONSOLE_PAGES } from '../../src/http/console.js';

/**
 * Holds every answer of the API to its OpenAPI document: the operation must be documented, the
 * status documented for it, the content type documented for that status, the body valid against
 * the documented schema, and the headers the document says are always sent present (and ETag,
 * RateLimit-* and Retry-After sent only where documented). TestApp.inject runs it on every answer.
 */

interface Header {
  required?: boolean;
}
interface Response {
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, Header>;
}
interface Operation {
  responses?: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

const CONSOLE = CONSOLE_PAGES.map((page) => new RegExp(`^${page.replace(/:id/g, '[^/]+')}$`));
const DOCS_ASSETS = /^\/api\/(docs\/static\/.+|docs\/json|docs\/yaml|redoc\/redoc\.standalone\.js)$/;
const CHECKED_HEADERS = ['etag', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'];
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly validators = new Map<string, ValidateFunction>();
  /** Path templates, literal ones first: /incidents/stats/ before /incidents/{id}/. */
  private readonly templates: Array<{ template: string; pattern: RegExp }>;

  constructor(private readonly doc: Document) {
    addFormats.default(this.ajv);
    this.ajv.addFormat('date-or-date-time', /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/);
    this.ajv.addSchema(doc as object, 'openapi');
    this.templates = Object.keys(doc.paths)
      .map((template) => ({
        template,
        params: (template.match(/\{/g) ?? []).length,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      }))
      .sort((a, b) => a.params - b.params);
  }

  /** What is wrong with this answer to `method url`, or [] when it is as documented. */
  check(method: string, url: string, res: LightMyRequestResponse): string[] {
    // Matched as the router matches it: on the path as sent, before a segment's escapes (%2F) are decoded.
    // Dot segments resolved, as the client resolves them before sending.
    const path = new URL(url.split('?')[0] ?? '/', 'http://localhost').pathname;
    const status = res.statusCode;
    const type = String(res.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const found = this.templates.find((t) => t.pattern.test(path) && this.doc.paths[t.template]?.[m]);
    const errors: string[] = [];
    if (!res.headers['x-request-id']) errors.push('no X-Request-Id header');
    // The docs pages' own files (scripts, styles, their JSON copy of this document) are not API.
    if (DOCS_ASSETS.test(path) && status === 200) return errors;
    // Nor are the console's pages (one HTML page for each) and its built files.
    if (status === 200 && ((type === 'text/html' && CONSOLE.some((page) => page.test(path))) || path.startsWith('/assets/'))) return errors;
    if (!found) {
      // Not an operation: an unknown path (404), a known path with another method (405), a missing slash (308).
      if (status === 308 && res.headers.location) return errors;
      // A body over the limit is refused as it is read, before it is known that no route takes it.
      // HEAD: the headers of the GET's answer, without its body.
      if ((status === 404 || status === 405) && method.toUpperCase() === 'HEAD' && res.rawPayload.length === 0) return errors;
      if ((status === 404 || status === 405 || status === 413) && type === 'application/problem+json') return [...errors, ...this.body('openapi#/components/schemas/Problem', res)];
      // Under TAXII, unknown paths and methods answer a TAXII error message.
      if ((status === 404 || status === 405) && path.startsWith('/taxii2/') && type === 'application/taxii+json') {
        const body = JSON.parse(res.body) as { title?: unknown; http_status?: unknown };
        return typeof body.title === 'string' && body.http_status === String(status) ? errors : [...errors, 'not a TAXII error message'];
      }
      // Under the Have I Been Pwned surface, an unknown path is its bare 404.
      if (status === 404 && path.startsWith('/hibp/') && res.rawPayload.length === 0) return errors;
      return [...errors, `undocumented operation answered ${status}`];
    }
    const base = pointer('paths', found.template, m, 'responses');
    const responses = this.doc.paths[found.template]?.[m]?.responses ?? {};
    const response = responses[String(status)] ?? responses.default;
    if (!response) return [...errors, `status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    const documentedHeaders = response.headers ?? {};
    for (const [name, h] of Object.entries(documentedHeaders)) if (h.required && res.headers[name] === undefined) errors.push(`documented header ${name} missing`);
    for (const name of CHECKED_HEADERS) if (res.headers[name] !== undefined && !documentedHeaders[name]) errors.push(`header ${name} sent but not documented`);
    const content = response.content;
    if (!content) {
      if (res.rawPayload.length > 0 && method !== 'HEAD') errors.push(`a body where none is documented (${type})`);
      return errors;
    }
    if (method === 'HEAD') return errors;
    const bare = (k: string) => k.split(';')[0]?.trim() ?? k;
    const key = Object.keys(content).find((k) => bare(k) === type || k === '*/*' || (k.endsWith('/*') && type.startsWith(k.slice(0, -1))));
    if (!key) return [...errors, `content type ${type || '(none)'} is not documented for ${status} (documented: ${Object.keys(content).join(', ')})`];
    if (content[key]?.schema && /json$/.test(type)) {
      errors.push(...this.body(`openapi#/${base}/${pointer(String(status) in responses ? String(status) : 'default', 'content', key, 'schema')}`, res));
    }
    return errors;
  }

  private body(ref: string, res: LightMyRequestResponse): string[] {
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return ['the body is not JSON'];
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).slice(0, 3).map((e) => `body${e.instancePath} ${e.message ?? 'is invalid'}`);
  }
}
