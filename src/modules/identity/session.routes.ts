import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { clientOf } from '../../http/client.js';
import { AppError, forbidden } from '../../http/errors.js';
import { errorResponses } from '../../http/schemas.js';
import type { AuthService } from './auth.service.js';
import { LoginSchema } from './auth.schemas.js';
import { unauthenticated, type TokenService } from './tokens.js';

/**
 * The console's session: the same tokens as /auth/token/, kept in HttpOnly cookies that no script
 * can read (an XSS can act while the page is open, never carry a token away). CSRF is impossible by
 * construction: the cookies are SameSite=Strict (a request started by another site carries none),
 * and a cookie counts only beside the `X-Threatmon-Console` header, which a cross-origin page
 * cannot add without a CORS preflight that threatmon never grants with credentials.
 */
export const CONSOLE_HEADER = 'x-threatmon-console';
export const ACCESS_COOKIE = 'threatmon_access';
export const REFRESH_COOKIE = 'threatmon_refresh';
const SESSION_PATH = '/api/v1/auth/session/';

/** The access token a console request carries in its cookie, or undefined when it is not one. */
export function consoleAccessToken(request: FastifyRequest): string | undefined {
  if (request.headers[CONSOLE_HEADER] !== '1') return undefined;
  return request.cookies?.[ACCESS_COOKIE] || undefined;
}

const tags = ['auth'];
const SessionSchema = Type.Object({
  expires_in: Type.Integer({ description: 'Seconds until the access cookie expires (then POST /auth/session/refresh/).' }),
  refresh_expires_in: Type.Integer({ description: 'Seconds until the session itself ends unless refreshed.' }),
});
const consoleOnly = {
  [CONSOLE_HEADER]: Type.Optional(Type.String({ description: 'Must be `1`: a cross-site page cannot send it (CSRF).' })),
};

export const sessionRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService; tokens: TokenService }> = async (app, { auth, tokens }) => {
  const secure = (request: FastifyRequest) => request.protocol === 'https';
  function setCookies(request: FastifyRequest, reply: FastifyReply, pair: { access: string; refresh: string }) {
    const common = { httpOnly: true, sameSite: 'strict', secure: secure(request) } as const;
    reply.setCookie(ACCESS_COOKIE, pair.access, { ...common, path: '/', maxAge: tokens.ttl('access') });
    reply.setCookie(REFRESH_COOKIE, pair.refresh, { ...common, path: SESSION_PATH, maxAge: tokens.ttl('refresh') });
    return { expires_in: tokens.ttl('access'), refresh_expires_in: tokens.ttl('refresh') };
  }
  function clearCookies(reply: FastifyReply) {
    reply.clearCookie(ACCESS_COOKIE, { path: '/' });
    reply.clearCookie(REFRESH_COOKIE, { path: SESSION_PATH });
  }
  function requireConsole(request: FastifyRequest) {
    if (request.headers[CONSOLE_HEADER] !== '1') throw forbidden('Cookie sessions need the header X-Threatmon-Console: 1.');
  }

  app.post(
    '/auth/session/',
    {
      schema: {
        tags,
        summary: 'Sign in to the console: the token pair in HttpOnly cookies',
        description:
          'As `POST /auth/token/` (same checks, throttle and audit), but the tokens are set as HttpOnly, SameSite=Strict cookies instead of returned: `threatmon_access` (path `/`: the TAXII 2.1 surface takes it too) and `threatmon_refresh` (path `/api/v1/auth/session/`). A request authenticates with the access cookie only when it also sends `X-Threatmon-Console: 1` and no other credentials. Without that header: 403.',
        headers: Type.Object(consoleOnly),
        body: LoginSchema,
        security: [],
        response: { 200: SessionSchema, ...errorResponses(400, 401, 403, 415, 429) },
      },
    },
    async (request, reply) => {
      requireConsole(request);
      const pair = await auth.login(request.body.username, request.body.password, clientOf(request));
      return setCookies(request, reply, pair);
    },
  );

  app.post(
    '/auth/session/refresh/',
    {
      schema: {
        tags,
        summary: 'Renew the console session',
        description: 'Rotates the refresh cookie as `POST /auth/token/refresh/` rotates a refresh token (reuse detection included) and sets both cookies again. No session: 401 (the cookies are cleared).',
        headers: Type.Object(consoleOnly),
        security: [],
        response: { 200: SessionSchema, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      requireConsole(request);
      const refresh = request.cookies[REFRESH_COOKIE];
      if (!refresh) throw unauthenticated('not_authenticated', 'No console session: sign in.');
      try {
        return setCookies(request, reply, await auth.refresh(refresh, request.ip));
      } catch (err) {
        clearCookies(reply);
        throw err;
      }
    },
  );

  app.delete(
    '/auth/session/',
    {
      schema: {
        tags,
        summary: 'Sign out of the console',
        description: 'Ends the session as `POST /auth/token/revoke/` does (its refresh token and every access token issued in it, on every node) and clears the cookies. Idempotent: 204 without a session too.',
        headers: Type.Object(consoleOnly),
        security: [],
        response: { 204: Type.Null({ description: 'Signed out.' }), ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      requireConsole(request);
      const refresh = request.cookies[REFRESH_COOKIE];
      clearCookies(reply);
      try {
        if (refresh) await auth.revoke(refresh, request.ip);
      } catch (err) {
        // A cookie that is no token of ours ends nothing; the cookies are cleared all the same.
        if (!(err instanceof AppError)) throw err;
      }
      return reply.code(204).send(null);
    },
  );
};
