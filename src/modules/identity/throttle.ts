import type { AppDeps } from '../../deps.js';
import { AppError, type ErrorCode } from '../../http/errors.js';

/** Failed credentials are counted over a fixed window, opened by the first failure. */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;

/** What a throttle counts, and what its 429 says. */
export interface Throttle {
  /** Each counter with its limit: past any, every attempt is refused. */
  limits: ReadonlyArray<readonly [key: string, limit: number]>;
  code: ErrorCode;
  /** The 429's detail before "retry in N s." */
  refused: string;
  /** The label of threatmon_rate_limit_rejections_total. */
  metric: string;
}

/**
 * A credential check under a throttle: at a limit every attempt (a right credential too) is 429 and
 * is not counted. The attempt's place is taken before the check and given back when it passes, so
 * concurrent attempts cannot all pass the limit.
 */
export async function throttled<T>(deps: Pick<AppDeps, 'counters' | 'metrics'>, throttle: Throttle, check: () => Promise<T | null>): Promise<T | null> {
  const { counters } = deps;
  const hits = await Promise.all(throttle.limits.map(([key, limit]) => counters.hit(key, limit, THROTTLE_WINDOW_MS)));
  const giveBack = () => Promise.all(throttle.limits.filter((_, i) => hits[i]?.allowed).map(([key]) => counters.release(key)));
  if (hits.some((h) => !h.allowed)) {
    await giveBack();
    const retry = Math.max(1, Math.ceil(Math.max(...hits.filter((h) => !h.allowed).map((h) => h.resetMs)) / 1000));
    deps.metrics.rateLimited.inc({ kind: throttle.metric });
    throw new AppError(throttle.code, 429, `${throttle.refused} retry in ${retry} s.`, {
      headers: { 'retry-after': String(retry) },
      body: { retry_after: retry },
    });
  }
  const passed = await check();
  if (passed !== null) await giveBack();
  return passed;
}
