import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { clientOf } from '../../http/client.js';
import type { TrackingTokensService } from './tracking-tokens.service.js';

/** A transparent 1x1 GIF. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const KeyParams = Type.Object({ key: Type.String({ description: 'The token key from its trigger_url.' }) });

/**
 * GET and HEAD /t/<key>/ (and any path below it), outside /api/v1 and without authentication. A
 * live web_bug, a disabled or deleted one and a key that never existed answer the same bytes; the
 * recording happens after the answer, off its path.
 */
export const triggerRoutes: FastifyPluginAsyncTypebox<{ tokens: TrackingTokensService }> = async (app, { tokens }) => {
  const handler = async (request: FastifyRequest<{ Params: { key: string } }>, reply: FastifyReply) => {
    const redirect = await tokens.trigger(request.params.key, clientOf(request));
    reply.header('cache-control', 'no-store, no-cache, must-revalidate, max-age=0').header('pragma', 'no-cache').header('expires', '0');
    if (redirect) return reply.code(302).header('location', redirect).send();
    return reply.code(200).type('image/gif').send(GIF);
  };
  const schema = {
    tags: ['tracking-tokens'],
    summary: 'A tracking token trigger',
    description:
      'No authentication. A web_bug key answers a 1x1 GIF (no-store); an unknown, disabled or deleted key answers exactly the same, and records nothing. A redirect key answers 302 to its redirect_url (a disabled one too, recording nothing). GET and HEAD both record an `http` exposure of an active token, with the client address, User-Agent, Referer, method and path, unless the address is in its ignore_ips or it has 60 exposures in the last 60 s.',
    params: KeyParams,
    response: {
      200: { description: 'A 1x1 transparent GIF.', content: { 'image/gif': { schema: { type: 'string', format: 'binary' } } } },
      302: Type.Null({ description: 'To the redirect token\'s redirect_url (the Location header).' }),
    },
  } as never;
  app.get('/t/:key/', { schema }, handler);
  app.get('/t/:key/*', { schema: { ...(schema as object), summary: 'A tracking token trigger, any path below it', params: Type.Object({ key: Type.String(), '*': Type.String() }) } as never }, handler as never);
};
