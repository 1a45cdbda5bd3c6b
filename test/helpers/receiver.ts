import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A local webhook receiver: records every request and answers what `answer` says (a status, or
 * 'hang' to hold the request until `release()`). `next(n)` resolves once n requests have arrived.
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: (r: Received) => number | 'hang' = () => 200;
  private readonly held: http.ServerResponse[] = [];
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body };
      this.received.push(r);
      this.waiters = this.waiters.filter((w) => (this.received.length >= w.n ? (w.resolve(), false) : true));
      const a = this.answer(r);
      if (a === 'hang') this.held.push(res);
      else if (a >= 300 && a < 400) res.writeHead(a, { location: '/elsewhere' }).end();
      else res.writeHead(a).end('ok');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  next(n: number): Promise<void> {
    if (this.received.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  release() {
    for (const res of this.held.splice(0)) res.writeHead(200).end('late');
  }

  async close() {
    this.release();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
