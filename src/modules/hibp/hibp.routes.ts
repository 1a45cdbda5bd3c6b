import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { type ApiKeysService, type Principal, principalOf } from '../identity/index.js';
import { authenticateHibp, type HibpDeps } from './hibp.auth.js';
import { sendHibpError, toHibpError } from './hibp.errors.js';
import { AliasesSchema, BreachSchema, HibpErrorSchema, SubscribedDomainSchema, SubscriptionStatusSchema, TruncatedBreachSchema } from './hibp.schemas.js';
import { HibpError, type HibpService } from './hibp.service.js';

/** Where the surface is served: its plugin's prefix, and the two bases its clients are given. */
export const HIBP_PREFIX = '/hibp';
const API = '/api/v3';
const PASSWORDS = '/pwnedpasswords';
const tags = ['hibp'];
const security = [{ hibpApiKey: [] }];
// Have I Been Pwned's error answers, not problem+json: these routes answer as its clients expect.
const errors = {
  400: Type.Null({ description: 'Not an acceptable account, domain or prefix (no body).' }),
  401: HibpErrorSchema,
  403: HibpErrorSchema,
  429: HibpErrorSchema,
  500: HibpErrorSchema,
};
const none = (description: string) => Type.Null({ description });

const bool = (v: string | undefined, fallback: boolean) => (v === undefined ? fallback : v.toLowerCase() !== 'false');

/**
 * Have I Been Pwned's v3 API and Pwned Passwords range at their own paths (no trailing slash), with
 * its headers, shapes, status codes and error bodies, so that its clients work unchanged with a
 * base URL and a threatmon API key.
 */
export const hibpRoutes: FastifyPluginAsyncTypebox<{ hibp: HibpService; keys: ApiKeysService; deps: HibpDeps; prefix: string }> = async (app, { hibp, keys, deps }) => {
  app.setErrorHandler((err: FastifyError, request, reply) => sendHibpError(toHibpError(err, request), reply));
  // Under the prefix, what matches no route is Have I Been Pwned's bare 404 (no problem+json, no
  // redirect to a slashed path): app.ts hands the prefix to the conventions' not-found handler.

  app.addHook('onRequest', (request, reply) => authenticateHibp(request, reply, keys, deps));

  const json = <T>(reply: FastifyReply, value: T | null) => (value === null ? reply.code(404).send() : value);

  app.get(
    `${API}/breachedaccount/:account`,
    {
      config: { hibp: 'key' },
      schema: {
        tags,
        security,
        summary: 'Breaches of an account (Have I Been Pwned)',
        description:
          'The sources holding the account as an e-mail address or a username, by name. `truncateResponse=false` answers each whole breach; `domain` keeps the breaches of that site; `includeUnverified=false` leaves unverified ones out. Sensitive sources are never answered by account. 404 (no body) when the account is in none.',
        params: Type.Object({ account: Type.String() }),
        querystring: Type.Object({ truncateResponse: Type.Optional(Type.String()), domain: Type.Optional(Type.String()), includeUnverified: Type.Optional(Type.String()) }),
        // Whole breaches first: the serializer takes the first schema a value matches, and a whole breach matches the name-only one.
        response: { 200: Type.Union([Type.Array(BreachSchema), Type.Array(TruncatedBreachSchema)]), 404: none('In no breach.'), ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query;
      return json(reply, await hibp.breachedAccount(request.params.account, { truncate: bool(q.truncateResponse, true), domain: q.domain, includeUnverified: bool(q.includeUnverified, true) }));
    },
  );

  app.get(
    `${API}/breaches`,
    {
      config: { hibp: 'open' },
      schema: {
        tags,
        security: [],
        summary: 'Every breach (Have I Been Pwned)',
        description: 'Every leak source as a breach; `domain` keeps those of a site, `isSpamList` spam lists (true) or the others (false). No key needed, as on Have I Been Pwned.',
        querystring: Type.Object({ domain: Type.Optional(Type.String()), isSpamList: Type.Optional(Type.String()) }),
        response: { 200: Type.Array(BreachSchema), ...errors },
      },
    },
    async (request) => hibp.breaches({ domain: request.query.domain, isSpamList: request.query.isSpamList === undefined ? undefined : bool(request.query.isSpamList, true) }),
  );

  app.get(
    `${API}/breach/:name`,
    {
      config: { hibp: 'open' },
      schema: { tags, security: [], summary: 'One breach by name (Have I Been Pwned)', description: 'The breach of that name, ignoring case; 404 (no body) when there is none. No key needed.', params: Type.Object({ name: Type.String() }), response: { 200: BreachSchema, 404: none('No breach of that name.'), ...errors } },
    },
    async (request, reply) => json(reply, await hibp.breach(request.params.name)),
  );

  app.get(
    `${API}/latestbreach`,
    {
      config: { hibp: 'open' },
      schema: { tags, security: [], summary: 'The breach added last (Have I Been Pwned)', description: 'The leak source added last, as a breach. No key needed.', response: { 200: BreachSchema, 404: none('No breach yet.'), ...errors } },
    },
    async (_request, reply) => json(reply, await hibp.latestBreach()),
  );

  app.get(
    `${API}/dataclasses`,
    {
      config: { hibp: 'open' },
      schema: { tags, security: [], summary: 'Data classes (Have I Been Pwned)', description: 'The names of the data classes breaches list. No key needed.', response: { 200: Type.Array(Type.String()), ...errors } },
    },
    async () => hibp.dataClasses(),
  );

  const domainRoute = (path: string, summary: string, description: string, response: object, answer: (p: Principal, domain: string) => Promise<unknown>) =>
    app.get(
      `${API}/${path}/:domain`,
      {
        config: { hibp: 'key' },
        schema: { tags, security, summary, description, params: Type.Object({ domain: Type.String() }), response: { 200: response, 404: none('Nothing found.'), ...errors } },
      },
      async (request, reply) => json(reply, await answer(principalOf(request), request.params.domain)),
    );

  const watched = 'Only for a domain your organization watches with an active domain monitor (or under one); otherwise 403, as Have I Been Pwned answers for a domain not verified.';
  domainRoute('breacheddomain', 'Breached addresses at a domain (Have I Been Pwned)', `Each alias (the part before @) at exactly this domain, with the breaches it is in. ${watched}`, AliasesSchema, (p, d) => hibp.breachedDomain(p, d));
  domainRoute('stealerlogsbywebsitedomain', 'Stealer-log addresses for a site (Have I Been Pwned)', `The e-mail addresses whose credentials for this site are in a source of kind stealer_log. ${watched}`, Type.Array(Type.String()), (p, d) =>
    hibp.stealerLogsByWebsiteDomain(p, d),
  );
  domainRoute('stealerlogsbyemaildomain', 'Stealer-log sites by alias at an e-mail domain (Have I Been Pwned)', `Each alias at this e-mail domain, with the sites a stealer log holds its credentials for. ${watched}`, AliasesSchema, (p, d) =>
    hibp.stealerLogsByEmailDomain(p, d),
  );

  app.get(
    `${API}/stealerlogsbyemail/:email`,
    {
      config: { hibp: 'key' },
      schema: {
        tags,
        security,
        summary: 'Stealer-log sites of an address (Have I Been Pwned)',
        description: `The sites whose credentials for this address a stealer log holds. Its domain must be watched: ${watched}`,
        params: Type.Object({ email: Type.String() }),
        response: { 200: Type.Array(Type.String()), 404: none('Nothing found.'), ...errors },
      },
    },
    async (request, reply) => json(reply, await hibp.stealerLogsByEmail(principalOf(request), request.params.email)),
  );

  app.get(
    `${API}/subscribeddomains`,
    {
      config: { hibp: 'key' },
      schema: { tags, security, summary: 'Watched domains (Have I Been Pwned)', description: 'The domains of your active domain monitors, with the breached addresses at each.', response: { 200: Type.Array(SubscribedDomainSchema), ...errors } },
    },
    async (request) => hibp.subscribedDomains(principalOf(request)),
  );

  app.get(
    `${API}/subscription/status`,
    {
      config: { hibp: 'key' },
      schema: { tags, security, summary: 'Your plan (Have I Been Pwned)', description: 'Rpm is the plan limit that requests by key count against.', response: { 200: SubscriptionStatusSchema, ...errors } },
    },
    async (request) => hibp.subscriptionStatus(principalOf(request)),
  );

  app.get(
    `${PASSWORDS}/range/:prefix`,
    {
      config: { hibp: 'range' },
      schema: {
        tags,
        security: [{}, { hibpApiKey: [] }],
        summary: 'Pwned Passwords range (Have I Been Pwned)',
        description:
          '`SUFFIX:COUNT` lines (CRLF) for the SHA-1 hashes (or with `mode=ntlm` the NTLM hashes) of the corpus\'s passwords that start with the 5 hex digits; `Add-Padding: true` pads the answer to 800-1,000 lines with count-0 lines. NTLM hashes exist for records ingested with a plaintext password since migration 0025. Takes a key when one is sent; without one it answers only when THREATMON_HIBP_PUBLIC_RANGE=true (401 otherwise).',
        params: Type.Object({ prefix: Type.String() }),
        querystring: Type.Object({ mode: Type.Optional(Type.String()) }),
        response: {
          200: { description: 'SUFFIX:COUNT lines.', content: { 'text/plain': { schema: Type.String() } } },
          404: none('Not a path of the range.'),
          ...errors,
          400: { description: 'Not 5 hex digits, or an unknown mode: the reason as text.', content: { 'text/plain': { schema: Type.String() } } },
        },
      },
    },
    async (request, reply) => {
      const mode = (request.query.mode ?? 'sha1').toLowerCase();
      if (!/^[0-9A-Fa-f]{5}$/.test(request.params.prefix) || (mode !== 'sha1' && mode !== 'ntlm')) {
        throw new HibpError(400, 'The hash prefix was not in a valid format', {}, false);
      }
      const body = await hibp.range(request.params.prefix, String(request.headers['add-padding'] ?? '').trim().toLowerCase() === 'true', mode);
      reply.type('text/plain');
      return reply.serializer((x: unknown) => x as string).send(body);
    },
  );
};
