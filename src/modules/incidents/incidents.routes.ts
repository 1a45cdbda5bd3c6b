import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { stringify } from 'csv-stringify/sync';
import { Type } from 'typebox';
import { stixBundle } from '../../domain/stix.js';
import { actorOf, principalOf } from '../identity/index.js';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema, sendJsonPage } from '../../http/listing.js';
import { errorResponses, IdParams, isUuid, Uuid } from '../../http/schemas.js';
import {
  BulkResultSchema,
  CommentCreateSchema,
  CommentSchema,
  CorrelatedIocSchema,
  EventSchema,
  IncidentCreateSchema,
  IncidentPatchSchema,
  IncidentSchema,
  IocInputSchema,
  IocPatchSchema,
  IocReadSchema,
  IocSchema,
  StatsSchema,
} from './incidents.schemas.js';
import { commentListing, correlationListing, eventListing, incidentListing, iocListing } from './incidents.lists.js';
import { presentIncident, presentIoc } from './incidents.presenters.js';
import type { iocIntel } from './incidents.intel.js';
import type { IncidentsService } from './incidents.service.js';

const tags = ['incidents'];
const IocParams = Type.Object({ id: Uuid('Incident id.'), iocId: Uuid('IOC id.') });
const NotModified = Type.Null({ description: 'Not modified (If-None-Match).' });
const NoContent = Type.Null({ description: 'Deleted.' });

export const incidentsRoutes: FastifyPluginAsyncTypebox<{ incidents: IncidentsService; intel: ReturnType<typeof iocIntel> }> = async (app, { incidents, intel }) => {

  app.get(
    '/incidents/',
    {
      schema: {
        tags,
        summary: 'List incidents',
        description: 'Filters combine with AND; comma lists are OR. `assignee` takes a user id, `me` or `none`. Search looks in title and description. `ordering=severity` orders by rank (low < critical).',
        querystring: listQuerystring(incidentListing),
        response: { 200: PageSchema(IncidentSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => sendJsonPage(reply, envelope(request, await incidents.list(principalOf(request), parseList(incidentListing, request.query, principalOf(request))))),
  );

  app.post(
    '/incidents/',
    {
      config: { etag: [201], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Create an incident',
        description: 'Analyst or above. Initial IOCs may be given in `iocs` (all must be valid; duplicates among them are skipped). The assignee must belong to your organization (400).',
        body: IncidentCreateSchema,
        response: { 201: IncidentSchema, ...errorResponses(400, 401, 403, 415) },
      },
    },
    async (request, reply) => {
      const row = await incidents.create(actorOf(request), request.body);
      reply.code(201).header('etag', etagOf(row.version));
      return presentIncident(row);
    },
  );

  app.get(
    '/incidents/stats/',
    {
      schema: { tags, summary: 'Incident statistics', description: '`open` counts every status but resolved and closed.', response: { 200: StatsSchema, ...errorResponses(401) } },
    },
    async (request) => incidents.stats(principalOf(request)),
  );

  app.get(
    '/incidents/iocs/',
    {
      schema: {
        tags,
        summary: 'IOCs across the organization (correlation)',
        description: 'Finds the same normalised value in every incident of your organization: `value` is normalised (and refanged) before matching.',
        querystring: listQuerystring(correlationListing),
        response: { 200: PageSchema(CorrelatedIocSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(request, await incidents.correlate(principalOf(request), parseList(correlationListing, request.query))),
  );

  app.get(
    '/incidents/:id/',
    {
      config: { etag: [200] },
      schema: { tags, summary: 'One incident', description: 'One incident of your organization (another organization\'s: 404). Sends its ETag (If-None-Match: 304).', params: IdParams, response: { 200: IncidentSchema, 304: NotModified, ...errorResponses(401, 404) } },
    },
    async (request, reply) => {
      const row = await incidents.get(principalOf(request), request.params.id);
      if (notModified(request, reply, row.version)) return reply;
      return presentIncident(row);
    },
  );

  app.patch(
    '/incidents/:id/',
    {
      config: { etag: [200], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Update an incident',
        description:
          'Analyst or above. Status changes follow the state machine; anything else is 409 `invalid_transition` with the `allowed` targets. resolved_at/closed_at are set by the server. Honours If-Match (412).',
        params: IdParams,
        body: IncidentPatchSchema,
        response: { 200: IncidentSchema, ...errorResponses(400, 401, 403, 404, 409, 412, 415) },
      },
    },
    async (request, reply) => {
      const row = await incidents.update(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(row.version));
      return presentIncident(row);
    },
  );

  app.delete(
    '/incidents/:id/',
    {
      config: { minRole: 'admin' },
      schema: { tags, summary: 'Delete an incident and its IOCs', description: 'Admin or above.', params: IdParams, response: { 204: NoContent, ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      await incidents.remove(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/incidents/:id/iocs/',
    {
      schema: {
        tags,
        summary: "An incident's IOCs",
        description: 'Search looks in value and description. Each IOC carries `feed_matches`: the indicators of your feeds naming the same type and value.',
        params: IdParams,
        querystring: listQuerystring(iocListing),
        response: { 200: PageSchema(IocReadSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const p = principalOf(request);
      const page = await incidents.listIocs(p, request.params.id, parseList(iocListing, request.query));
      return envelope(request, { ...page, results: await intel(p.organization.id, page.results) });
    },
  );

  app.post(
    '/incidents/:id/iocs/',
    {
      config: { etag: [201], minRole: 'analyst' },
      // Items of the array form are validated one by one in the service, so one bad item rejects only itself.
      validatorCompiler: () => () => true,
      schema: {
        tags,
        summary: 'Add one IOC, or up to 1000 at once',
        description:
          'A JSON object adds one IOC: 201 with it, or 409 `duplicate` when the incident already has that type and value. A JSON array (at most 1000) answers 200 `{created, duplicates, rejected: [{index, errors}]}`: invalid items are reported, valid ones kept.',
        params: IdParams,
        body: Type.Union([IocInputSchema, Type.Array(IocInputSchema, { maxItems: 1000 })]),
        response: { 200: BulkResultSchema, 201: IocSchema, ...errorResponses(400, 401, 403, 404, 409, 415) },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      // The body validator is off for this route, and params with it: check the id here.
      if (!isUuid(id)) return reply.callNotFound();
      const body = request.body as unknown;
      if (Array.isArray(body)) return incidents.addManyIocs(actorOf(request), id, body);
      const row = await incidents.addOneIoc(actorOf(request), id, body);
      reply.code(201).header('etag', etagOf(row.version));
      return presentIoc(row);
    },
  );

  app.get(
    '/incidents/:id/iocs/:iocId/',
    {
      config: { etag: [200] },
      schema: { tags, summary: 'One IOC', description: 'One IOC of the incident (404 when it is not the incident\'s), with `feed_matches`.', params: IocParams, response: { 200: IocReadSchema, 304: NotModified, ...errorResponses(401, 404) } },
    },
    async (request, reply) => {
      const p = principalOf(request);
      const row = await incidents.getIoc(p, request.params.id, request.params.iocId);
      if (notModified(request, reply, row.version)) return reply;
      return (await intel(p.organization.id, [presentIoc(row)]))[0];
    },
  );

  app.patch(
    '/incidents/:id/iocs/:iocId/',
    {
      config: { etag: [200], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Update an IOC',
        description: 'Analyst or above. Honours If-Match.',
        params: IocParams,
        body: IocPatchSchema,
        response: { 200: IocSchema, ...errorResponses(400, 401, 403, 404, 412, 415) },
      },
    },
    async (request, reply) => {
      const row = await incidents.updateIoc(actorOf(request), request.params.id, request.params.iocId, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(row.version));
      return presentIoc(row);
    },
  );

  app.delete(
    '/incidents/:id/iocs/:iocId/',
    {
      config: { minRole: 'admin' },
      schema: { tags, summary: 'Remove an IOC', description: 'Admin or above (deleting is an admin right); recorded in the timeline as ioc_removed.', params: IocParams, response: { 204: NoContent, ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      await incidents.removeIoc(actorOf(request), request.params.id, request.params.iocId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/incidents/:id/events/',
    {
      schema: {
        tags,
        summary: 'Activity timeline',
        description: 'Creation, every field change (from -> to), IOCs added and removed, comments.',
        params: IdParams,
        querystring: listQuerystring(eventListing),
        response: { 200: PageSchema(EventSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(request, await incidents.listEvents(principalOf(request), request.params.id, parseList(eventListing, request.query))),
  );

  app.get(
    '/incidents/:id/comments/',
    {
      schema: { tags, summary: 'Comments', description: 'The incident\'s comments, paginated.', params: IdParams, querystring: listQuerystring(commentListing), response: { 200: PageSchema(CommentSchema), ...errorResponses(400, 401, 404) } },
    },
    async (request) => envelope(request, await incidents.listComments(principalOf(request), request.params.id, parseList(commentListing, request.query))),
  );

  app.post(
    '/incidents/:id/comments/',
    {
      config: { minRole: 'analyst' },
      schema: { tags, summary: 'Add a comment', description: 'Analyst or above.', params: IdParams, body: CommentCreateSchema, response: { 201: CommentSchema, ...errorResponses(400, 401, 403, 404, 415) } },
    },
    async (request, reply) => {
      const comment = await incidents.addComment(actorOf(request), request.params.id, request.body.body);
      return reply.code(201).send(comment);
    },
  );

  app.get(
    '/incidents/:id/export/',
    {
      schema: {
        tags,
        summary: 'Export as STIX 2.1 or CSV',
        description:
          '`format=stix` (default): a STIX 2.1 bundle, `application/stix+json;version=2.1`: a `report` for the incident, an `indicator` with a STIX pattern per IOC, a `vulnerability` per CVE, TLP 2.0 `marking-definition`s; type `other` is left out and named in the report description. Ids are deterministic. `format=csv`: `type,value,description,tlp,tags,first_seen,last_seen,created_at` (tags joined with `;`, cells that a spreadsheet would run as formulas escaped).',
        params: IdParams,
        querystring: Type.Object({ format: Type.Optional(Type.Enum(['stix', 'csv'], { type: 'string', description: 'stix (default) or csv.' })) }),
        response: {
          200: {
            description: 'The export.',
            content: {
              'application/stix+json;version=2.1': { schema: Type.Object({ type: Type.Literal('bundle'), id: Type.String(), objects: Type.Array(Type.Record(Type.String(), Type.Unknown())) }) },
              'text/csv': { schema: Type.String() },
            },
          },
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      const incident = await incidents.get(p, request.params.id);
      const iocs = await incidents.allIocs(p, incident.id);
      const inc = presentIncident(incident);
      if (request.query.format === 'csv') {
        const csv = stringify(
          iocs.map(presentIoc).map((i) => [i.type, i.value, i.description, i.tlp, i.tags.join(';'), i.first_seen ?? '', i.last_seen ?? '', i.created_at]),
          { header: true, columns: ['type', 'value', 'description', 'tlp', 'tags', 'first_seen', 'last_seen', 'created_at'], escape_formulas: true },
        );
        reply.header('content-disposition', `attachment; filename="incident-${incident.id}.csv"`).type('text/csv; charset=utf-8');
        return reply.serializer((x: unknown) => x as string).send(csv);
      }
      const bundle = stixBundle(
        { ...inc, version: incident.version, organization: { id: p.organization.id, name: p.organization.name } },
        iocs.map(presentIoc),
      );
      reply.header('content-disposition', `attachment; filename="incident-${incident.id}.stix.json"`).type('application/stix+json;version=2.1');
      return reply.serializer(JSON.stringify).send(bundle);
    },
  );
};
