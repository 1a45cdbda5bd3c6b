import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema } from '../../http/listing.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { actorOf, principalOf } from '../identity/index.js';
import { DeliverySchema, TestResultSchema, WebhookCreateSchema, WebhookPatchSchema, WebhookSchema } from './webhooks.schemas.js';
import { presentWebhook } from './webhooks.presenters.js';
import type { WebhooksService } from './webhooks.service.js';
import { deliveryListing, webhookListing } from './webhooks.lists.js';

const tags = ['webhooks'];
// Every webhook route is for admins and owners: a webhook sends the organization's data out.
const admin = { minRole: 'admin' } as const;

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  app.get(
    '/webhooks/',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Your webhooks',
        description: 'Admin or above. Filter is_active; search looks in the URL and the description. Secrets are never shown here.',
        querystring: listQuerystring(webhookListing),
        response: { 200: PageSchema(WebhookSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => envelope(request, await webhooks.list(principalOf(request), parseList(webhookListing, request.query))),
  );

  app.post(
    '/webhooks/',
    {
      config: { ...admin, etag: [201] },
      schema: {
        tags,
        summary: 'Register a webhook',
        description:
          'Admin or above. 201 with its `secret`, shown this once. Each subscribed event of your organization is then POSTed as `{id, type, timestamp, data}` (data: the resource as the API shows it), signed per Standard Webhooks (`webhook-id` = the body id, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`): any Standard Webhooks library verifies it. 2xx is delivered; anything else, a redirect, a timeout (5 s to connect, 10 s in all) or a network error is retried with backoff and jitter after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (8 attempts); 50 consecutive failures disable the webhook.',
        body: WebhookCreateSchema,
        response: { 201: WebhookSchema, ...errorResponses(400, 401, 403, 415) },
      },
    },
    async (request, reply) => {
      const { row, secret } = await webhooks.create(actorOf(request), request.body);
      reply.code(201).header('etag', etagOf(row.version));
      return presentWebhook(row, secret);
    },
  );

  app.get(
    '/webhooks/:id/',
    {
      config: { ...admin, etag: [200] },
      schema: { tags, summary: 'One webhook', description: 'Admin or above. Without its secret.', params: IdParams, response: { 200: WebhookSchema, 304: Type.Null({ description: 'Not modified (If-None-Match).' }), ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      const row = await webhooks.get(principalOf(request), request.params.id);
      if (notModified(request, reply, row.version)) return reply;
      return presentWebhook(row);
    },
  );

  app.patch(
    '/webhooks/:id/',
    {
      config: { ...admin, etag: [200] },
      schema: {
        tags,
        summary: 'Update a webhook',
        description: 'Admin or above: url (checked as at creation), events, description, is_active (true again resets failure_count). Honours If-Match (412).',
        params: IdParams,
        body: WebhookPatchSchema,
        response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404, 412, 415) },
      },
    },
    async (request, reply) => {
      const row = await webhooks.update(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(row.version));
      return presentWebhook(row);
    },
  );

  app.delete(
    '/webhooks/:id/',
    {
      config: admin,
      schema: { tags, summary: 'Delete a webhook', description: 'Admin or above. Its queued deliveries and its log go with it.', params: IdParams, response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      await webhooks.remove(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret/',
    {
      config: { ...admin, etag: [200] },
      schema: {
        tags,
        summary: 'Rotate the secret',
        description: 'Admin or above. A new secret, shown this once. For 24 hours the previous one signs too: `webhook-signature` then holds two `v1,` signatures, so receivers can switch without missing an event.',
        params: IdParams,
        response: { 200: WebhookSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { row, secret } = await webhooks.rotate(actorOf(request), request.params.id);
      reply.header('etag', etagOf(row.version));
      return presentWebhook(row, secret);
    },
  );

  app.post(
    '/webhooks/:id/test/',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Send a test ping',
        description: 'Admin or above. Sends a signed `ping` event now and answers what came back. It is logged among the deliveries, never counted in failure_count. The body, if any, is ignored.',
        params: IdParams,
        response: { 200: TestResultSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => webhooks.test(principalOf(request), request.params.id),
  );

  app.get(
    '/webhooks/:id/deliveries/',
    {
      config: admin,
      schema: {
        tags,
        summary: "A webhook's delivery log",
        description: 'Admin or above. Every attempt, newest first, test pings included. Kept for THREATMON_WEBHOOK_RETENTION (default 30 days).',
        params: IdParams,
        querystring: listQuerystring(deliveryListing),
        response: { 200: PageSchema(DeliverySchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => envelope(request, await webhooks.deliveries(principalOf(request), request.params.id, parseList(deliveryListing, request.query))),
  );
};
