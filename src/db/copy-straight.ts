/**
 * A COPY straight into leak_records (its keys unique), inside a savepoint: true when every row went
 * in; false when a key already stored failed it (unique_violation), nothing of it kept and the
 * transaction usable again. Used on one server's transaction and on each shard's connection.
 */
export async function copyStraight(run: (statement: string) => Promise<unknown>, copy: () => Promise<unknown>): Promise<boolean> {
  await run('savepoint leak_records_copy');
  try {
    await copy();
    await run('release savepoint leak_records_copy');
    return true;
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code !== '23505') throw err;
    await run('rollback to savepoint leak_records_copy');
    return false;
  }
}
