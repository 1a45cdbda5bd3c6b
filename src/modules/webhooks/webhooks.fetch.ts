import http from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';
import { agentFor } from './webhooks.sender.js';
import { BlockedDestination, blockedAddress, hostOf } from './webhooks.ssrf.js';

export interface Fetched {
  status: number;
  contentType: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Why a guarded GET got no answer to read: said in words (a feed's last_error). */
export class FetchRefused extends Error {}

/**
 * A GET under the same guard as webhook deliveries (no private, loopback or link-local address,
 * whatever the name resolves to at connection time), read up to `maxBytes` and within `timeoutMs`:
 * past either, FetchRefused naming the limit. Redirects are not followed (a feed names its URL).
 */
export function fetchGuarded(url: string, options: { headers?: Record<string, string>; maxBytes: number; timeoutMs: number; allowPrivate: boolean }): Promise<Fetched> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.reject(new FetchRefused('invalid URL'));
  }
  const host = hostOf(url);
  if (!options.allowPrivate && ipaddr.isValid(host) && blockedAddress(host)) return Promise.reject(new FetchRefused(`refused: ${host} is not a public address`));
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<Fetched>((resolve, reject) => {
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(new FetchRefused(message));
    };
    const req = client.request(target, { method: 'GET', headers: { 'user-agent': 'threatmon-feeds/1', ...options.headers }, agent: agentFor(target.protocol, options.allowPrivate) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) return fail(`the answer is larger than ${options.maxBytes} bytes`);
        chunks.push(chunk);
      });
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', (err) => fail(err.message));
    });
    const timer = setTimeout(() => fail(`no whole answer within ${options.timeoutMs / 1000} s`), options.timeoutMs);
    req.on('error', (err) => fail(err instanceof BlockedDestination ? `refused: ${err.message}` : err.message));
    req.end();
  });
}
