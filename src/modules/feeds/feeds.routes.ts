import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema } from '../../http/listing.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { actorOf, principalOf } from '../identity/index.js';
import { feedListing, indicatorListing } from './feeds.lists.js';
import { presentFeed } from './feeds.presenters.js';
import { PULL_LIMITS } from './feeds.pull.js';
import { BundleUploadSchema, FeedCreateSchema, FeedPatchSchema, FeedSchema, IndicatorPatchSchema, IndicatorSchema, SyncSchema } from './feeds.schemas.js';
import type { FeedsService } from './feeds.service.js';

const FEEDS = '/feeds/';
const INDICATORS = '/indicators/';
// Analysts read feeds (credentials masked) and indicators, and flag indicators; admins change feeds.
const reader = { minRole: 'analyst' } as const;
const admin = { minRole: 'admin' } as const;
const NotModified = Type.Null({ description: 'Not modified (If-None-Match).' });

export const feedsRoutes: FastifyPluginAsyncTypebox<{ feeds: FeedsService }> = async (app, { feeds }) => {
  app.get(
    FEEDS,
    { config: reader, schema: { tags: ['feeds'], summary: 'Feeds', description: 'Analyst or above. Filters kind, is_active; search looks in name and URL. Credentials are masked.', querystring: listQuerystring(feedListing), response: { 200: PageSchema(FeedSchema), ...errorResponses(400, 401, 403, 404) } } },
    async (request) => envelope(request, await feeds.list(principalOf(request), parseList(feedListing, request.query))),
  );

  app.post(
    FEEDS,
    {
      config: { ...admin, etag: [201] },
      schema: {
        tags: ['feeds'],
        summary: 'Add a feed',
        description:
          'Admin or above. 201 with its credentials whole, this once; it is pulled at once, then every interval_seconds. Each pull reads at most 64 MiB, 200,000 objects or entries, within 120 s: past a limit, or on an HTTP error or a document that is not what the kind says, nothing of it is applied and last_error says why (tried again after 1, 2, 4... minutes, at most the interval). Its URL is held to the webhook rules (no private address unless THREATMON_WEBHOOK_ALLOW_PRIVATE).',
        body: FeedCreateSchema,
        response: { 201: FeedSchema, ...errorResponses(400, 401, 403, 415) },
      },
    },
    async (request, reply) => {
      const row = await feeds.create(actorOf(request), request.body);
      reply.code(201).header('etag', etagOf(Number(row.version)));
      return presentFeed(row, true);
    },
  );

  app.get(
    `${FEEDS}:id/`,
    { config: { ...reader, etag: [200] }, schema: { tags: ['feeds'], summary: 'One feed', description: 'Analyst or above. Its health: status, last_pull_at, last_success_at, last_error, the counts and the first rejects of its last pull that had any.', params: IdParams, response: { 200: FeedSchema, 304: NotModified, ...errorResponses(401, 403, 404) } } },
    async (request, reply) => {
      const row = await feeds.get(principalOf(request), request.params.id);
      if (notModified(request, reply, Number(row.version))) return reply;
      return presentFeed(row);
    },
  );

  app.patch(
    `${FEEDS}:id/`,
    { config: { ...admin, etag: [200] }, schema: { tags: ['feeds'], summary: 'Change a feed', description: 'Admin or above: anything but kind (null clears a csv feed\'s column or type). Honours If-Match (412).', params: IdParams, body: FeedPatchSchema, response: { 200: FeedSchema, ...errorResponses(400, 401, 403, 404, 412, 415) } } },
    async (request, reply) => {
      const row = await feeds.update(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(Number(row.version)));
      return presentFeed(row);
    },
  );

  app.delete(
    `${FEEDS}:id/`,
    { config: admin, schema: { tags: ['feeds'], summary: 'Delete a feed', description: 'Admin or above. Its indicators stay (without this feed among their sources).', params: IdParams, response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(401, 403, 404) } } },
    async (request, reply) => {
      await feeds.remove(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    `${FEEDS}:id/sync/`,
    { config: admin, schema: { tags: ['feeds'], summary: 'Pull a feed now', description: 'Admin or above. 202: the feed is due now and the background pulls take it (GET it to see the outcome). The body, if any, is ignored.', params: IdParams, response: { 202: SyncSchema, ...errorResponses(401, 403, 404) } } },
    async (request, reply) => reply.code(202).send(await feeds.sync(actorOf(request), request.params.id)),
  );

  app.post(
    `${FEEDS}:id/upload/`,
    {
      config: admin,
      bodyLimit: PULL_LIMITS.maxBytes,
      schema: {
        tags: ['feeds'],
        summary: 'Give a stix feed a bundle',
        description: `Admin or above. A STIX 2.1 bundle (application/json, at most 64 MiB and ${PULL_LIMITS.maxObjects.toLocaleString('en')} objects) read and applied at once, as a pull of the feed's URL would be: its indicators, counts and health in one transaction. 200 with the feed. Only a stix feed takes one (400 naming \`kind\`); a stix feed created without a URL is given its bundles this way only.`,
        params: IdParams,
        body: BundleUploadSchema,
        response: { 200: FeedSchema, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request) => presentFeed(await feeds.upload(actorOf(request), request.params.id, request.body.objects)),
  );

  app.get(
    INDICATORS,
    {
      config: reader,
      schema: { tags: ['indicators'], summary: 'Indicators from feeds', description: 'Analyst or above. Filters type, tlp, revoked, false_positive, feed; search looks in value and name; ordering created_at, last_seen, first_seen, value.', querystring: listQuerystring(indicatorListing), response: { 200: PageSchema(IndicatorSchema), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => envelope(request, await feeds.listIndicators(principalOf(request), parseList(indicatorListing, request.query))),
  );

  app.get(
    `${INDICATORS}:id/`,
    { config: { ...reader, etag: [200] }, schema: { tags: ['indicators'], summary: 'One indicator', description: 'Analyst or above.', params: IdParams, response: { 200: IndicatorSchema, 304: NotModified, ...errorResponses(401, 403, 404) } } },
    async (request, reply) => {
      const row = await feeds.getIndicator(principalOf(request), request.params.id);
      if (notModified(request, reply, Number(row.version))) return reply;
      return feeds.presentOne(row);
    },
  );

  app.patch(
    `${INDICATORS}:id/`,
    { config: { ...reader, etag: [200] }, schema: { tags: ['indicators'], summary: 'Flag an indicator', description: 'Analyst or above: `false_positive` and `note` only (what feeds say is theirs). Honours If-Match (412).', params: IdParams, body: IndicatorPatchSchema, response: { 200: IndicatorSchema, ...errorResponses(400, 401, 403, 404, 412, 415) } } },
    async (request, reply) => {
      const row = await feeds.updateIndicator(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(Number(row.version)));
      return feeds.presentOne(row);
    },
  );
};
