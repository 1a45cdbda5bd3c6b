import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, onReach } from '../api/client';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * What `load` answers, loaded again whenever `key` changes (the page's filters, say); answers that
 * come back after a newer request started are dropped, so a fast typist never sees an old page.
 */
export function useLoad<T>(load: () => Promise<T>, key: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === latest.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => mine === latest.current && setState({ data: undefined, error, loading: false }),
    );
  }, [...key, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  // The server back after an outage: what the page shows is read again.
  useEffect(() => onReach((reach) => reach === 'up' && reload()), [reload]);
  return { ...state, reload };
}

/** A form's values kept in the tab's sessionStorage until it is sent: a sign-in in between loses nothing. */
export function useDraft<T extends object>(key: string, initial: T): [T, (change: Partial<T>) => void, () => void] {
  const storageKey = `draft:${key}`;
  const [value, setValue] = useState<T>(() => {
    const kept = sessionStorage.getItem(storageKey);
    if (!kept) return initial;
    try {
      return { ...initial, ...(JSON.parse(kept) as Partial<T>) };
    } catch {
      return initial;
    }
  });
  const update = useCallback(
    (change: Partial<T>) =>
      setValue((v) => {
        const next = { ...v, ...change };
        sessionStorage.setItem(storageKey, JSON.stringify(next));
        return next;
      }),
    [storageKey],
  );
  const clear = useCallback(() => {
    sessionStorage.removeItem(storageKey);
    setValue(initial);
  }, [storageKey]);
  return [value, update, clear];
}

/** Runs an action, keeping its error to show and whether it is under way. */
export function useAction() {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { error, busy, run, setError };
}

export const isApiError = (err: unknown): err is ApiError => err instanceof ApiError;
