import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

export type Problem = components['schemas']['Problem'];

/** The JSON a path's method answers with 200 or 201. */
export type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: { content: { 'application/json': infer T } } }
    ? T
    : R extends { 201: { content: { 'application/json': infer T } } }
      ? T
      : never
  : never;
/** One item of a paginated list. */
export type Item<P extends keyof paths> = Ok<P, 'get' & keyof paths[P]> extends { results: Array<infer T> } ? T : never;

/**
 * Every request goes with the session cookie (HttpOnly: the page never holds a token) and the
 * header that makes the cookie count (a cross-site page cannot send it). An access cookie that has
 * expired is renewed once, for every request waiting on it, and the request sent again; a session
 * that cannot be renewed tells the app, which sends the person to sign in.
 */
const SESSION = '/api/v1/auth/session/';
export const CONSOLE_HEADERS = { 'X-Threatmon-Console': '1' } as const;
let renewing: Promise<boolean> | null = null;
const expiredListeners = new Set<() => void>();

export function onSessionExpired(listener: () => void): () => void {
  expiredListeners.add(listener);
  return () => expiredListeners.delete(listener);
}

export function renewSession(): Promise<boolean> {
  renewing ??= fetch(`${SESSION}refresh/`, { method: 'POST', headers: CONSOLE_HEADERS, credentials: 'same-origin' })
    .then((r) => r.ok)
    .catch(() => false)
    .finally(() => setTimeout(() => (renewing = null), 0));
  return renewing;
}

/** Whether the server answers: a request that cannot reach it, or a 502-504, says it does not. */
export type Reach = 'up' | 'down';
let reach: Reach = 'up';
const reachListeners = new Set<(reach: Reach) => void>();

export function onReach(listener: (reach: Reach) => void): () => void {
  reachListeners.add(listener);
  return () => reachListeners.delete(listener);
}

function setReach(next: Reach) {
  if (next === reach) return;
  reach = next;
  for (const listener of reachListeners) listener(next);
  if (next === 'down') void watchUntilBack();
}

/** Asks /health/ after 1 s, then 2, 4... up to every 10 s, until the server answers 200 again. */
async function watchUntilBack() {
  for (let wait = 1000; reach === 'down'; wait = Math.min(wait * 2, 10_000)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      if ((await fetch('/health/', { cache: 'no-store' })).ok) setReach('up');
    } catch {
      // Still gone: ask again later.
    }
  }
}

async function reachable(request: Request): Promise<Response> {
  try {
    const response = await fetch(request);
    if (response.status >= 502 && response.status <= 504) setReach('down');
    return response;
  } catch (err) {
    setReach('down');
    throw err;
  }
}

export async function consoleFetch(input: Request): Promise<Response> {
  const again = input.clone();
  const response = await reachable(input);
  if (response.status !== 401 || new URL(input.url).pathname.startsWith(SESSION)) return response;
  if (await renewSession()) {
    const retried = await reachable(again);
    if (retried.status !== 401) return retried;
  }
  for (const listener of expiredListeners) listener();
  return response;
}

export const api = createClient<paths>({ baseUrl: '', headers: CONSOLE_HEADERS, credentials: 'same-origin', fetch: consoleFetch });

/** An answer that was not 2xx, as the API explained it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail);
  }
}

/** The data of an openapi-fetch answer, or an ApiError carrying the problem. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const problem = (error && typeof error === 'object' && 'detail' in error ? error : { type: 'about:blank', detail: `${response.status} ${response.statusText}`, status: response.status, code: 'error', title: response.statusText, request_id: response.headers.get('x-request-id') ?? '' }) as Problem;
  throw new ApiError(response.status, problem);
}
