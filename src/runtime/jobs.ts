/** Where a background job reports what went wrong (the app's logger). */
export interface JobLog {
  error: (obj: object, msg: string) => void;
  info?: (obj: object, msg: string) => void;
}

/**
 * Work a module does in the background of `threatmon serve` (scans, deliveries): started in one
 * process per node, stopped before the database closes. Each job claims its work in the database,
 * so nodes sharing one PostgreSQL never do the same piece twice.
 */
export interface BackgroundJob {
  name: string;
  start: (log: JobLog) => void;
  stop: () => Promise<void>;
}

/**
 * A job's turns: `work` runs at start, every `pollMs` and on `wake()`, one turn at a time (a wake
 * during a turn asks for one more). A failed turn is logged and the next one goes on.
 */
export class JobLoop {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private halted = false;
  private ticks = 0;
  log?: JobLog;

  constructor(
    private readonly work: () => Promise<unknown>,
    private readonly failure: string,
    private readonly options: { pollMs: number; onTick?: (tick: number) => void; onWake?: () => void },
  ) {}

  /** Set by stop() until the next start(): work in progress ends at its next safe point. */
  get stopping(): boolean {
    return this.halted;
  }

  start(log: JobLog): void {
    this.log = log;
    this.halted = false;
    this.timer = setInterval(() => {
      this.wake();
      this.options.onTick?.(++this.ticks);
    }, this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  wake(): void {
    if (!this.timer || this.halted) return;
    if (this.running) {
      this.again = true;
      this.options.onWake?.();
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.work();
        } catch (err) {
          this.log?.error({ err }, this.failure);
        }
      } while (this.again && !this.halted);
    })().finally(() => {
      this.running = undefined;
    });
  }

  /** Stops the turns and waits for the one in progress. */
  async stop(): Promise<void> {
    this.halted = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.options.onWake?.();
    await this.running;
  }
}
