import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from 'react';
import { useLocation } from 'wouter';
import { api, type Ok, onSessionExpired, ApiError, must } from './api/client';

export type Me = Ok<'/api/v1/auth/me/', 'get'>;
export type Role = Me['role'];
const RANK: Record<string, number> = { viewer: 0, analyst: 1, admin: 2, owner: 3 };

interface Session {
  me: Me | null;
  /** True once the first look at the session has answered. */
  known: boolean;
  signIn(username: string, password: string): Promise<void>;
  signOut(): Promise<void>;
  reload(): Promise<void>;
}
const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The signed-in person (pages under the sign-in guard only). */
export function useMe(): Me {
  const { me } = useSession();
  if (!me) throw new Error('useMe without a session');
  return me;
}

/** Whether the person's role is at least `role` (the API decides; this only hides what it would refuse). */
export function can(me: Me, role: Role): boolean {
  return (RANK[me.role] ?? -1) >= (RANK[role] ?? 99);
}

export function signInPath(next: string): string {
  return next && next !== '/' && !next.startsWith('/sign-in') ? `/sign-in/?next=${encodeURIComponent(next)}` : '/sign-in/';
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);
  const [known, setKnown] = useState(false);
  const [, navigate] = useLocation();

  const reload = useCallback(async () => {
    const { data } = await api.GET('/api/v1/auth/me/');
    setMe(data ?? null);
    setKnown(true);
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);

  // A session that ends while the page is open (expired, signed out elsewhere, password changed):
  // to sign-in, and back here after it. Forms keep their drafts (useDraft) meanwhile.
  useEffect(
    () =>
      onSessionExpired(() => {
        setMe(null);
        const here = window.location.pathname + window.location.search;
        if (!here.startsWith('/sign-in')) navigate(signInPath(here));
      }),
    [navigate],
  );

  const signIn = useCallback(
    async (username: string, password: string) => {
      await must(api.POST('/api/v1/auth/session/', { body: { username, password } }));
      await reload();
    },
    [reload],
  );
  const signOut = useCallback(async () => {
    await must(api.DELETE('/api/v1/auth/session/'));
    sessionStorage.clear();
    setMe(null);
    navigate('/sign-in/');
  }, [navigate]);

  return <SessionContext.Provider value={{ me, known, signIn, signOut, reload }}>{children}</SessionContext.Provider>;
}

export { ApiError };
