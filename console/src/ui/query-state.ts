import { useCallback, useMemo } from 'react';
import { useLocation, useSearch } from 'wouter';

/**
 * A page's filters kept in its address (a link or a reload shows the same list); a change to any
 * filter but the page goes back to page 1.
 */
export function useQueryState<K extends string>(keys: readonly K[]): [Record<K, string> & { page: number }, (change: Partial<Record<K | 'page', string | number>>) => void] {
  const search = useSearch();
  const [location, navigate] = useLocation();
  const state = useMemo(() => {
    const params = new URLSearchParams(search);
    const values = Object.fromEntries(keys.map((k) => [k, params.get(k) ?? ''])) as Record<K, string>;
    return { ...values, page: Math.max(1, Number(params.get('page')) || 1) };
  }, [search]);
  const set = useCallback(
    (change: Partial<Record<K | 'page', string | number>>) => {
      const params = new URLSearchParams(search);
      for (const [k, v] of Object.entries(change)) {
        if (v === '' || v === undefined || v === null || (k === 'page' && v === 1)) params.delete(k);
        else params.set(k, String(v));
      }
      if (!('page' in change)) params.delete('page');
      const text = params.toString();
      navigate(`${location}${text ? `?${text}` : ''}`, { replace: true });
    },
    [search, location, navigate],
  );
  return [state, set];
}
