import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { clientOf } from '../../http/client.js';
import { principalOf } from './principal.js';
import { errorResponses } from '../../http/schemas.js';
import type { AuthService } from './auth.service.js';
import { LoginSchema, PasswordChangeSchema, RefreshSchema, TokenPairSchema, VerifySchema } from './auth.schemas.js';

const tags = ['auth'];

/** The token endpoints: no Authorization needed; throttled by their own rules, not the plan limit. */
export const publicAuthRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService }> = async (app, { auth }) => {
  app.post(
    '/auth/token/',
    {
      schema: {
        tags,
        summary: 'Log in: get an access and a refresh token',
        description:
          'Unknown user and wrong password get the same 401 `invalid_credentials` in the same time. After 10 failures for a username (or 50 from one IP) in a 15-minute window, every attempt is 429 `login_throttled` until the window ends, a right password too.',
        body: LoginSchema,
        security: [],
        response: { 200: TokenPairSchema, ...errorResponses(400, 401, 415) },
      },
    },
    async (request) => auth.login(request.body.username, request.body.password, clientOf(request)),
  );

  app.post(
    '/auth/token/refresh/',
    {
      schema: {
        tags,
        summary: 'Exchange a refresh token for a new pair',
        description: 'Rotation: the presented refresh token is revoked. Presenting a revoked refresh token again revokes its whole family (reuse detection): 401, and the access tokens issued in that session stop working too (within 2 s on every node).',
        body: RefreshSchema,
        security: [],
        response: { 200: TokenPairSchema, ...errorResponses(400, 401, 415) },
      },
    },
    async (request) => auth.refresh(request.body.refresh, request.ip),
  );

  app.post(
    '/auth/token/verify/',
    {
      schema: {
        tags,
        summary: 'Check a token',
        description: '200 `{}` when the token (access or refresh) is valid, unexpired, not revoked and its user active; 401 otherwise.',
        body: VerifySchema,
        security: [],
        response: { 200: Type.Object({}, { description: 'Valid.' }), ...errorResponses(400, 401, 415) },
      },
    },
    async (request) => {
      await auth.verify(request.body.token);
      return {};
    },
  );

  app.post(
    '/auth/token/revoke/',
    {
      schema: {
        tags,
        summary: 'Log out: revoke a refresh token',
        description: 'Logout: ends the session, that is the refresh token, every token rotated from the same login, and every access token issued in it (refused within 2 s on every node; the `sid` claim ties a token to its session). Idempotent: an already revoked or expired token answers 204 too; a token that is not ours is 401.',
        body: RefreshSchema,
        security: [],
        response: { 204: Type.Null({ description: 'Revoked.' }), ...errorResponses(400, 401, 415) },
      },
    },
    async (request, reply) => {
      await auth.revoke(request.body.refresh, request.ip);
      return reply.code(204).send(null);
    },
  );
};

/** The caller's password: behind authentication (GET /auth/me/ is the organizations module's: it shows the organization). */
export const privateAuthRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService }> = async (app, { auth }) => {
  app.post(
    '/auth/password/',
    {
      schema: {
        tags,
        summary: 'Change your password',
        description: 'The new password needs 12+ characters, must not be the username nor appear in a known breach. Ends every session of yours: refresh and access tokens alike (within 2 s on every node). A wrong `current_password` counts as a failed login of your username for the login throttle (10 per 15 min, then 429). A person\'s session only: with an API key, 403.',
        body: PasswordChangeSchema,
        response: { 204: Type.Null({ description: 'Changed.' }), ...errorResponses(400, 401, 403, 415, 429) },
      },
    },
    async (request, reply) => {
      await auth.changePassword(principalOf(request), request.body.current_password, request.body.new_password, request.ip);
      return reply.code(204).send(null);
    },
  );
};
