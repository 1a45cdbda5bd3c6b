import http from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { BlockedDestination, blockedAddress, guardedLookup, hostOf } from './webhooks.ssrf.js';

const CONNECT_TIMEOUT_MS = 5_000;
const TOTAL_TIMEOUT_MS = 10_000;
/** At most this much of an answer is read. */
const MAX_ANSWER = 64 * 1024;

export interface SendResult {
  ok: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** The first KiB of what the receiver answered (chat services say why they refused in it). */
  answer?: string;
}

/**
 * Keep-alive agents, one per protocol and guard: a receiver's connection is reused across
 * deliveries. A new connection resolves through the guard; one reused was made to an address it
 * checked.
 */
const agents = new Map<string, http.Agent>();
export function agentFor(protocol: string, allowPrivate: boolean): http.Agent {
  const key = `${protocol}${allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    // No socket limit here: the worker bounds its deliveries itself, per webhook, and a pool shared by
    // webhooks on one host would let a hanging one hold up the others.
    const options = { keepAlive: true, maxFreeSockets: 64, lookup: guardedLookup(allowPrivate) };
    agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** Standard Webhooks signatures of `body`: one per secret, space-separated (both during a rotation). */
export function sign(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' ');
}

/**
 * POSTs one signed message: 5 s to connect, 10 s in all, redirects not followed (a 3xx is a
 * failure), at most 64 KiB of the answer read. Private destinations are refused at connection time
 * unless `allowPrivate`.
 */
export async function send(url: string, headers: Record<string, string>, body: string, allowPrivate: boolean): Promise<SendResult> {
  const started = performance.now();
  let answer = '';
  const done = (status: number | null, error: string | null): SendResult => ({
    ok: status !== null && status >= 200 && status < 300,
    status_code: status,
    duration_ms: Math.round(performance.now() - started),
    error,
    answer: answer.slice(0, 1024),
  });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return done(null, 'invalid URL');
  }
  const host = hostOf(url);
  // An IP literal is connected to without a lookup: it is checked here instead.
  if (!allowPrivate && ipaddr.isValid(host) && blockedAddress(host)) return done(null, `refused: ${host} is not a public address`);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      resolve(r);
    };
    const req = client.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'threatmon-webhooks/1', ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: agentFor(target.protocol, allowPrivate),
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          if (answer.length < 1024) answer += chunk.toString('utf8', 0, Math.min(chunk.length, 1024));
          read += chunk.length;
          if (read >= MAX_ANSWER) {
            res.destroy();
            finish(done(res.statusCode ?? null, null));
          }
        });
        res.on('end', () => finish(done(res.statusCode ?? null, null)));
        res.on('error', () => finish(done(res.statusCode ?? null, null)));
      },
    );
    const total = setTimeout(() => {
      req.destroy();
      finish(done(null, `timed out after ${TOTAL_TIMEOUT_MS / 1000} s`));
    }, TOTAL_TIMEOUT_MS);
    req.on('socket', (socket) => {
      // A kept-alive socket is connected already.
      if (!socket.connecting) return;
      const connectTimer = setTimeout(() => {
        if (socket.connecting) {
          req.destroy();
          finish(done(null, `could not connect within ${CONNECT_TIMEOUT_MS / 1000} s`));
        }
      }, CONNECT_TIMEOUT_MS);
      socket.once('connect', () => clearTimeout(connectTimer));
      socket.once('close', () => clearTimeout(connectTimer));
    });
    req.on('error', (err) => finish(done(null, err instanceof BlockedDestination ? `refused: ${err.message}` : err.message)));
    req.end(body);
  });
}
