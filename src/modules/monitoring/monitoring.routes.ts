import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema, sendJsonPage } from '../../http/listing.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { actorOf, principalOf } from '../identity/index.js';
import { IncidentSchema, presentIncident } from '../incidents/index.js';
import { Uuid } from '../../http/schemas.js';
import {
  AlertBulkResultSchema,
  AlertBulkSchema,
  AlertPatchSchema,
  AlertSchema,
  MonitorCreateSchema,
  MonitorPatchSchema,
  MonitorSchema,
  MonitoringStatsSchema,
  ScanQueuedSchema,
  ScanSchema,
} from './monitoring.schemas.js';
import { alertListing, monitorListing, scanListing } from './monitoring.lists.js';
import { presentAlert, presentMonitor, presentScan } from './monitoring.presenters.js';
import type { MonitoringService } from './monitoring.service.js';

const tags = ['monitoring'];
const ScanParams = Type.Object({ id: Uuid('Monitor id.'), scanId: Uuid('Scan id.') });

export const monitoringRoutes: FastifyPluginAsyncTypebox<{ monitoring: MonitoringService }> = async (app, { monitoring }) => {
  app.get(
    '/monitoring/',
    {
      schema: {
        tags,
        summary: 'Your monitors',
        description: 'Filters type, status, severity (comma lists); search looks in the name and the terms.',
        querystring: listQuerystring(monitorListing),
        response: { 200: PageSchema(MonitorSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(request, await monitoring.list(principalOf(request), parseList(monitorListing, request.query))),
  );

  app.post(
    '/monitoring/',
    {
      config: { etag: [201], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Create a monitor',
        description: 'Analyst or above. Each term is validated and normalised for the type; a bad one is 400 naming `terms.<index>`. From then on every ingested record is matched against it. An active monitor also scans the existing corpus in the background unless `backfill` is false: follow that scan at GET /monitoring/<id>/scans/; `last_scan_at` is set when it finishes.',
        body: MonitorCreateSchema,
        response: { 201: MonitorSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const row = await monitoring.create(actorOf(request), request.body);
      reply.code(201).header('etag', etagOf(row.version));
      return presentMonitor(row);
    },
  );

  app.get(
    '/monitoring/:id/',
    {
      config: { etag: [200] },
      schema: { tags, summary: 'One monitor', description: 'One monitor of your organization (another organization\'s: 404), with its alert figures.', params: IdParams, response: { 200: MonitorSchema, 304: Type.Null({ description: 'Not modified (If-None-Match).' }), ...errorResponses(401, 404) } },
    },
    async (request, reply) => {
      const row = await monitoring.get(principalOf(request), request.params.id);
      if (notModified(request, reply, row.version)) return reply;
      return presentMonitor(row);
    },
  );

  app.patch(
    '/monitoring/:id/',
    {
      config: { etag: [200], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Update a monitor',
        description: 'Analyst or above: name, description, terms (normalised for the monitor\'s type), status, severity. Honours If-Match (412).',
        params: IdParams,
        body: MonitorPatchSchema,
        response: { 200: MonitorSchema, ...errorResponses(400, 401, 403, 404, 412, 415) },
      },
    },
    async (request, reply) => {
      const row = await monitoring.update(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(row.version));
      return presentMonitor(row);
    },
  );

  app.delete(
    '/monitoring/:id/',
    {
      config: { minRole: 'admin' },
      schema: { tags, summary: 'Delete a monitor', description: 'Admin or above. Its alerts go with it; incidents made from them keep their data.', params: IdParams, response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(401, 403, 404) } },
    },
    async (request, reply) => {
      await monitoring.remove(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/monitoring/stats/',
    { schema: { tags, summary: 'Monitoring figures', description: 'Monitors by status, alerts by status and severity, and alerts raised on each of the last 30 days (UTC).', response: { 200: MonitoringStatsSchema, ...errorResponses(401) } } },
    async (request) => monitoring.stats(principalOf(request)),
  );

  app.get(
    '/monitoring/alerts/',
    {
      schema: {
        tags,
        summary: "Your organization's alerts",
        description: 'Newest first. Filters monitor, status, severity (comma lists); search looks in the matched term and the note.',
        querystring: listQuerystring(alertListing),
        response: { 200: PageSchema(AlertSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => sendJsonPage(reply, envelope(request, await monitoring.listAlerts(principalOf(request), parseList(alertListing, request.query)))),
  );

  app.get(
    '/monitoring/:id/alerts/',
    {
      schema: { tags, summary: "One monitor's alerts", description: 'The alerts of one monitor, newest first, with the filters of /monitoring/alerts/.', params: IdParams, querystring: listQuerystring(alertListing), response: { 200: PageSchema(AlertSchema), ...errorResponses(400, 401, 404) } },
    },
    async (request, reply) => sendJsonPage(reply, envelope(request, await monitoring.listAlerts(principalOf(request), parseList(alertListing, request.query), request.params.id))),
  );

  app.post(
    '/monitoring/:id/scan/',
    {
      config: { minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Scan the corpus again',
        description:
          'Analyst or above. 202: a scan of the whole leak corpus for the monitor\'s terms is queued, and runs in the background (one scan per monitor at a time; a request while one is queued answers that one). Alerts never duplicate: a record already alerted on for a term raises nothing. The scan is a durable job: after a restart it goes on from where it was. Follow it at GET /monitoring/<id>/scans/<scan_id>/ (the `Location` header); when it completes, the monitor\'s `last_scan_at` is set and a `monitor.scan_completed` event is recorded. The body, if any, is ignored.',
        params: IdParams,
        response: { 202: ScanQueuedSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const queued = await monitoring.requestScan(actorOf(request), request.params.id);
      reply.code(202).header('location', `${request.url.replace(/scan\/(\?.*)?$/, 'scans/')}${queued.scan_id}/`);
      return queued;
    },
  );

  app.get(
    '/monitoring/:id/scans/',
    {
      schema: {
        tags,
        summary: "One monitor's scans",
        description: 'Newest first: the backfill of its creation and each scan requested since, with its status (queued, running, completed) and progress.',
        params: IdParams,
        querystring: listQuerystring(scanListing),
        response: { 200: PageSchema(ScanSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      await monitoring.get(principalOf(request), request.params.id);
      return envelope(request, await monitoring.scans.list(principalOf(request), request.params.id, parseList(scanListing, request.query)));
    },
  );

  app.get(
    '/monitoring/:id/scans/:scanId/',
    { schema: { tags, summary: 'One scan', description: 'Its status and progress.', params: ScanParams, response: { 200: ScanSchema, ...errorResponses(401, 404) } } },
    async (request) => presentScan(await monitoring.scans.get(principalOf(request), request.params.id, request.params.scanId)),
  );

  app.post(
    '/monitoring/alerts/bulk/',
    {
      config: { minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Triage many alerts at once',
        description: 'Analyst or above: up to 1,000 ids get the status (and note). Ids that name no alert of your organization are listed in `not_found`; the others change.',
        body: AlertBulkSchema,
        response: { 200: AlertBulkResultSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => monitoring.triage(actorOf(request), request.body),
  );

  app.post(
    '/monitoring/alerts/:id/escalate/',
    {
      config: { etag: [200, 201], minRole: 'analyst' },
      // An action: no body at all is the same as {}.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        summary: 'Escalate an alert to an incident',
        description:
          'Analyst or above. Without a body (or `{}`): 201, a new incident titled `<monitor name>: <matched term> in <source name>`, with the alert\'s severity, `source_alert` set and IOCs for the leak record\'s e-mail, domain and ip. With `{"incident": "<uuid>"}`: 200, merged into that incident of yours (its IOCs added, duplicates skipped, an `alert_merged` event on its timeline). Either way the alert becomes acknowledged and names the incident; escalating it again is 409.',
        params: IdParams,
        body: Type.Object({ incident: Type.Optional(Type.String({ format: 'uuid', description: 'An incident to merge into instead of creating one.' })) }, { additionalProperties: false }),
        response: { 200: IncidentSchema, 201: IncidentSchema, ...errorResponses(400, 401, 403, 404, 409, 415) },
      },
    },
    async (request, reply) => {
      const { incident, created } = await monitoring.escalate(actorOf(request), request.params.id, request.body.incident?.toLowerCase());
      reply.code(created ? 201 : 200).header('etag', etagOf(incident.version));
      return presentIncident(incident);
    },
  );

  app.get(
    '/monitoring/alerts/:id/',
    {
      config: { etag: [200] },
      schema: { tags, summary: 'One alert', description: 'One alert of your organization, with the leak record it found.', params: IdParams, response: { 200: AlertSchema, 304: Type.Null({ description: 'Not modified (If-None-Match).' }), ...errorResponses(401, 404) } },
    },
    async (request, reply) => {
      const row = await monitoring.getAlert(principalOf(request), request.params.id);
      if (notModified(request, reply, row.version)) return reply;
      return monitoring.presentMarked(principalOf(request), row);
    },
  );

  app.patch(
    '/monitoring/alerts/:id/',
    {
      config: { etag: [200], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Triage an alert',
        description: 'Analyst or above: status and note. Honours If-Match (412).',
        params: IdParams,
        body: AlertPatchSchema,
        response: { 200: AlertSchema, ...errorResponses(400, 401, 403, 404, 412, 415) },
      },
    },
    async (request, reply) => {
      const row = await monitoring.updateAlert(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(row.version));
      return presentAlert(row);
    },
  );
};
