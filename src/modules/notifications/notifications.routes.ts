import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema } from '../../http/listing.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { actorOf, principalOf } from '../identity/index.js';
import { channelListing } from './notifications.lists.js';
import { ChannelCreateSchema, ChannelPatchSchema, ChannelSchema, ChannelTestSchema } from './notifications.schemas.js';
import { presentChannel } from './notifications.presenters.js';
import type { NotificationsService } from './notifications.service.js';

const tags = ['notifications'];
const PATH = '/notifications/channels/';
// Analysts read channels (targets masked); admins and owners change them.
const reader = { minRole: 'analyst' } as const;
const admin = { minRole: 'admin' } as const;

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ notifications: NotificationsService }> = async (app, { notifications }) => {
  app.get(
    PATH,
    {
      config: reader,
      schema: {
        tags,
        summary: 'Notification channels',
        description: 'Analyst or above. Filters kind, is_active; search looks in the name. Incoming-webhook URLs are masked.',
        querystring: listQuerystring(channelListing),
        response: { 200: PageSchema(ChannelSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => envelope(request, await notifications.list(principalOf(request), parseList(channelListing, request.query))),
  );

  app.post(
    PATH,
    {
      config: { ...admin, etag: [201] },
      schema: {
        tags,
        summary: 'Add a notification channel',
        description:
          "Admin or above. 201 with its target whole, this once. Each event it takes is sent in the channel's format, with a link to the record (THREATMON_PUBLIC_URL); at most per_minute messages a minute, the minute's later events in one digest at its end (how many, on how many monitors, the highest severity, the top 5). A failed message is retried with backoff (10 s, 1 min, 5 min, 15 min, 1 h, 2 h, 4 h, then every 8 h) for 24 h; the channel shows status failing meanwhile and is never disabled but by you.",
        body: ChannelCreateSchema,
        response: { 201: ChannelSchema, ...errorResponses(400, 401, 403, 415) },
      },
    },
    async (request, reply) => {
      const row = await notifications.create(actorOf(request), request.body);
      reply.code(201).header('etag', etagOf(Number(row.version)));
      return presentChannel(row, true);
    },
  );

  app.get(
    `${PATH}:id/`,
    {
      config: { ...reader, etag: [200] },
      schema: { tags, summary: 'One notification channel', description: 'Analyst or above. Its health: status, last_success_at, last_failure_at, last_error, consecutive_failures.', params: IdParams, response: { 200: ChannelSchema, 304: Type.Null({ description: 'Not modified (If-None-Match).' }), ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      const row = await notifications.get(principalOf(request), request.params.id);
      if (notModified(request, reply, Number(row.version))) return reply;
      return presentChannel(row);
    },
  );

  app.patch(
    `${PATH}:id/`,
    {
      config: { ...admin, etag: [200] },
      schema: {
        tags,
        summary: 'Change a notification channel',
        description: 'Admin or above: anything but kind (a new target is checked as at creation). is_active false disables it (its messages wait); true again starts its failure count over. Honours If-Match (412).',
        params: IdParams,
        body: ChannelPatchSchema,
        response: { 200: ChannelSchema, ...errorResponses(400, 401, 403, 404, 412, 415) },
      },
    },
    async (request, reply) => {
      const row = await notifications.update(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(Number(row.version)));
      return presentChannel(row);
    },
  );

  app.delete(
    `${PATH}:id/`,
    {
      config: admin,
      schema: { tags, summary: 'Delete a notification channel', description: 'Admin or above. Its queued messages go with it.', params: IdParams, response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      await notifications.remove(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    `${PATH}:id/test/`,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Send a test message',
        description: "Admin or above. Sends a sample alert now, as the channel sends alerts (its personal-data setting applied), and answers what the target said: for chat services the HTTP status and body, for e-mail the SMTP server's reply. The outcome counts in the channel's health. The body, if any, is ignored.",
        params: IdParams,
        response: { 200: ChannelTestSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => notifications.test(actorOf(request), request.params.id),
  );
};
