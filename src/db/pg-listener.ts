import { type Kysely, sql } from 'kysely';
import pg from 'pg';

/** Announces on `channel` to every listener (an empty payload: the channel is the message). */
export async function notify(db: Kysely<any>, channel: string): Promise<void> {
  await sql`select pg_notify(${channel}, '')`.execute(db);
}

export interface ListenerEvents {
  /** A NOTIFY on the channel (from any process connected to the database, this one included). */
  notify(payload: string): void;
  /** Listening (again): notifications sent from now on arrive. */
  up(): void;
  /** The connection failed or was lost: notifications sent meanwhile are lost; reconnecting. */
  down(err: unknown): void;
}

/**
 * One PostgreSQL connection that LISTENs on a channel, reconnecting after a failure (100 ms, doubling
 * to 5 s). Its own connection: a pooled one would stop listening when handed back.
 */
export class PgListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retryMs = 100;
  private timer: NodeJS.Timeout | null = null;
  /** Resolves when the first LISTEN succeeded (or the listener was closed). */
  readonly ready: Promise<void>;
  private resolveReady!: () => void;

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly events: ListenerEvents,
    /** Shown in pg_stat_activity. */
    private readonly applicationName = 'threatmon listener',
  ) {
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    void this.connect();
  }

  private async connect(): Promise<void> {
    this.timer = null;
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.connectionString, connectionTimeoutMillis: 5000, application_name: this.applicationName });
    this.client = client;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed || this.closed) return;
      failed = true;
      this.client = null;
      void discard(client);
      this.events.down(err);
      this.timer = setTimeout(() => void this.connect(), this.retryMs);
      this.timer.unref();
      this.retryMs = Math.min(this.retryMs * 2, 5000);
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('connection ended')));
    client.on('notification', (msg) => {
      if (msg.channel === this.channel) this.events.notify(msg.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    } catch (err) {
      fail(err);
      return;
    }
    if (failed || this.closed) return;
    this.retryMs = 100;
    this.events.up();
    this.resolveReady();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.resolveReady();
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    if (client) await discard(client);
  }
}

/** Closes a client whose events nobody wants any more (an error while closing must not crash the process). */
async function discard(client: pg.Client): Promise<void> {
  client.removeAllListeners();
  client.on('error', () => {});
  await client.end().catch(() => {});
}
