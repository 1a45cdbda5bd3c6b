import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { problem } from './errors.js';

/** Where `npm run build` writes the console (console/ built by Vite): the same from src/ and dist/. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../dist/console/', import.meta.url));

/**
 * The console's pages: each answers the same index.html, whose script draws the page for the path.
 * The console's router (console/src/pages.ts) names the same paths; its tests open each directly.
 */
export const CONSOLE_PAGES = [
  '/',
  '/sign-in/',
  '/account/',
  '/alerts/',
  '/alerts/:id/',
  '/leaks/',
  '/monitors/',
  '/monitors/:id/',
  '/incidents/',
  '/incidents/:id/',
  '/tokens/',
  '/tokens/:id/',
  '/sources/',
  '/feeds/',
  '/integrations/',
  '/admin/',
] as const;

/**
 * Scripts and styles only from this origin, none inline and no eval; no plugin, no framing; every
 * request the page makes goes back to this server.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The console: its pages, and its assets under /assets/ (names hashed by the build, so cached for a
 * year as immutable; served pre-compressed with Brotli or gzip when the browser takes it).
 */
export const consoleRoutes = fp(
  async (app: FastifyInstance) => {
    const built = existsSync(`${CONSOLE_DIR}index.html`);
    let index: Buffer | undefined;
    if (built) {
      await app.register(fastifyStatic, {
        root: `${CONSOLE_DIR}assets`,
        prefix: '/assets/',
        preCompressed: true,
        immutable: true,
        maxAge: '365d',
        index: false,
        wildcard: true,
        schemaHide: true,
      });
    }
    for (const url of CONSOLE_PAGES) {
      app.get(url, { schema: { hide: true } }, async (request, reply) => {
        if (!built) {
          const body = problem(503, 'unavailable', 'The console is not built: run `npm run build`.', request.id);
          return reply.code(503).type('application/problem+json').send(body);
        }
        index ??= await readFile(`${CONSOLE_DIR}index.html`);
        return reply.header('content-security-policy', CONSOLE_CSP).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
      });
    }
  },
  { name: 'console' },
);
