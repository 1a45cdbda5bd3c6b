/** What the corpus-shards tests give both corpora (sharded and one server) alike, and read from the shards. */
import pg from 'pg';

/** Ids that both corpora hand out alike: a counter, its last digit 0 (the sharded one writes its slot there). */
export function countingIds() {
  let n = 0;
  return () => `018f0000-0000-7000-8000-${(++n).toString(16).padStart(11, '0')}0`;
}
/** An id without the slot digit: the same record's id in both corpora. */
export const unslotted = (id: string) => id.slice(0, -1);

/** A corpus with repeats across sources (so a search matches several records), every kind of field. */
export function corpus(n: number, seed: number) {
  const first = ['jennifer', 'james', 'maria', 'robert', 'linda', 'michael', 'olga', 'chen'];
  const last = ['smith', 'robinson', 'garcia', 'nguyen', 'muller', 'kowalski'];
  const domains = ['corp1.example', 'mail.corp1.example', 'corp2.example', 'shop.example'];
  const out: Record<string, unknown>[] = [];
  let x = seed;
  const rnd = (k: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return Math.floor(x / 65536) % k;
  };
  for (let i = 0; i < n; i++) {
    const f = first[rnd(first.length)] as string;
    const l = last[rnd(last.length)] as string;
    const d = domains[rnd(domains.length)] as string;
    const r: Record<string, unknown> = { email: `${f}.${l}${rnd(30)}@${d}`, full_name: `${f} ${l}` };
    if (rnd(3) === 0) r.username = `${f}${l}${rnd(10)}`.toUpperCase();
    if (rnd(4) === 0) r.phone = `+4420${7000000 + rnd(40)}`;
    if (rnd(2) === 0) r.password = `pw-${rnd(50)}`;
    if (rnd(3) === 0) r.ip = `10.${rnd(3)}.${rnd(4)}.${rnd(200)}`;
    if (rnd(5) === 0) r.leaked_at = `2024-0${1 + rnd(9)}-1${rnd(9)}T00:00:00Z`;
    if (rnd(6) === 0) delete r.email;
    out.push(r);
  }
  return out;
}

/** The rows of `text` on each shard server, in their order (a connection of its own to each). */
export async function rowsOnEach<R extends object>(servers: ReadonlyArray<{ url: string }>, text: string): Promise<R[][]> {
  const out: R[][] = [];
  for (const s of servers) {
    const c = new pg.Client({ connectionString: s.url });
    await c.connect();
    try {
      out.push((await c.query<R>(text)).rows);
    } finally {
      await c.end();
    }
  }
  return out;
}

/** The records each shard server holds, in their order. */
export async function recordsOnEach(servers: ReadonlyArray<{ url: string }>): Promise<number[]> {
  return (await rowsOnEach<{ n: string }>(servers, 'select count(*) as n from leak_records')).map((rows) => Number(rows[0]?.n));
}
