import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-app.js';

/**
 * Sends raw bytes and reads the whole answer (the server closes the connection after a malformed
 * request). `open`: the client leaves its side open, so that only the server can end the exchange.
 */
function raw(port: number, bytes: Buffer | string, open = false): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    if (open) socket.write(bytes);
    else socket.end(bytes);
  });
}

describe('requests that are not valid HTTP', () => {
  let t: TestApp;
  let port: number;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_LOG_LEVEL: 'info' }, { logger: undefined, logStream: { write: (line: string) => void lines.push(line) } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t.close());

  const cases: Array<[string, Buffer | string, number, string]> = [
    ['a space in the query', 'GET /api/v1/incidents/?a= b HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'malformed_request'],
    ['a raw non-ASCII byte in the path', Buffer.concat([Buffer.from('GET /api/v1/caf'), Buffer.from([0xe9]), Buffer.from('/ HTTP/1.1\r\nHost: x\r\n\r\n')]), 400, 'malformed_request'],
    ['a header past the size limit', `GET /health/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret-in-oversized-request\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
  ];

  it.each(cases)('answers %s as problem+json with the security headers and a request id', async (_name, bytes, status, code) => {
    lines.length = 0;
    const res = await raw(port, bytes);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ type: 'about:blank', status, code, request_id: res.headers['x-request-id'] });
    expect(body.detail).toEqual(expect.any(String));
    // Logged with its id, and never with the raw request (it may carry credentials).
    expect(lines.some((l) => l.includes(res.headers['x-request-id'] as string))).toBe(true);
    expect(lines.join('')).not.toContain('secret-in-oversized-request');
  });
});

describe('what Node answers bare unless told', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    // A body that stalls is given 300 ms: the test waits for the answer, never for the clock.
    t = await buildTestApp({ THREATMON_BODY_TIMEOUT_MS: '300' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t.close());

  const cases: Array<[string, string, number, string]> = [
    ['no Host header', 'GET /health/ HTTP/1.1\r\n\r\n', 400, 'malformed_request'],
    ['two Host headers', 'GET /health/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400, 'malformed_request'],
    ['an Expect other than 100-continue', 'GET /health/ HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\n\r\n', 417, 'expectation_failed'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 'method_not_allowed'],
    ['a body shorter than its Content-Length', 'POST /api/v1/auth/token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"', 408, 'request_timeout'],
    ['a chunked body that stops', 'POST /api/v1/auth/token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{"\r\n', 408, 'request_timeout'],
  ];

  it.each(cases)('answers %s as problem+json with a request id, then closes', async (_name, bytes, status, code) => {
    // The socket is left open by the client: the server must answer and close it by itself.
    const res = await raw(port, bytes, true);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(res.body)).toMatchObject({ status, code, request_id: res.headers['x-request-id'] });
  });

  it('answers a streamed ingest whose body stalls with 408, keeping the lines that came', async () => {
    const org = await t.createOrg('enterprise', undefined, true);
    const token = await t.token(org.owner);
    const source = await t.as(org.owner, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'stalled', kind: 'combolist' } });
    expect(source.statusCode).toBe(201);
    const id = JSON.parse(source.body).id as string;
    const line = 'stalled@example.com:a password\n';
    const res = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (d) => chunks.push(d));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.write(`POST /api/v1/leaks/sources/${id}/records/?format=combo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n${line}`);
    });
    expect(res).toMatch(/^HTTP\/1.1 408 /);
    const body = JSON.parse(res.slice(res.indexOf('\r\n\r\n') + 4));
    // What arrived before the stall is stored, and the answer says so.
    expect(body).toMatchObject({ code: 'request_timeout', accepted: 1 });
    const found = await t.as(org.owner, { method: 'GET', url: '/api/v1/leaks/search/?email=stalled@example.com' });
    expect(JSON.parse(found.body).count).toBe(1);
  });
});
