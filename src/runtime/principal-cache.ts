/**
 * Who a request is by, remembered between requests so that a search does not pay a second database
 * round trip to learn that its user is still active.
 *
 * A remembered principal is only as old as the last change to users or organizations: whoever
 * commits such a change calls `changed()`, which forgets every principal in this process and, through
 * the peers added at start-up, in every other API process (the cluster's workers, each of them
 * acknowledging before `changed()` resolves; on PostgreSQL every node, through NOTIFY). `ttlMs` bounds
 * what nothing announces (an UPDATE typed into psql); 0 turns remembering off.
 */
export class PrincipalCache<P> {
  private readonly entries = new Map<string, { value: P; expires: number }>();
  private readonly peers: Array<() => Promise<void>> = [];
  /** Bumped by every clear: a principal read before it may be older than the change and is not kept. */
  private generation = 0;
  /** False while a peer that announces other nodes' changes is down: nothing is served from memory then. */
  private trusted = true;

  constructor(
    readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
    private readonly maxEntries = 10_000,
  ) {}

  get(userId: string): P | undefined {
    const hit = this.entries.get(userId);
    if (!hit) return undefined;
    if (hit.expires > this.now()) return hit.value;
    this.entries.delete(userId);
    return undefined;
  }

  /** Taken before reading a principal from the database, and handed back to `put`. */
  mark(): number {
    return this.generation;
  }

  put(userId: string, value: P, mark: number): void {
    if (this.ttlMs <= 0 || !this.trusted || mark !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(userId, { value, expires: this.now() + this.ttlMs });
  }

  /** Forgets every principal in this process (what a peer's announcement does). */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /** A peer's channel went down (false) or came back (true); either way what is held may be stale. */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.clear();
  }

  /** Announces changes to the other processes; `announce` resolves once they have forgotten. */
  addPeer(announce: () => Promise<void>): void {
    this.peers.push(announce);
  }

  /**
   * Called after a change to users or organizations has committed. Resolves once every process this
   * one can reach has forgotten; a peer that fails is logged by `onError` and its processes fall back
   * on `ttlMs` (the change itself is committed and stays).
   */
  async changed(onError: (err: unknown) => void = (err) => console.error(`principal cache: could not tell other processes of a change: ${String(err)}`)): Promise<void> {
    this.clear();
    const results = await Promise.allSettled(this.peers.map((announce) => announce()));
    for (const r of results) if (r.status === 'rejected') onError(r.reason);
  }
}
