import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { User } from '@gitbook/api';
import { ApiError, onSessionEnded, request } from './api/client.ts';

export interface AppSession {
  object: 'session';
  user: User;
  expiresAt: string | null;
}

interface SessionState {
  /** undefined while the first check runs; null when no one is signed in. */
  session: AppSession | null | undefined;
  /** True when a call answered 401 after the app had a session: the sign-in dialog shows over the screen. */
  expired: boolean;
  signIn(email: string, password: string): Promise<void>;
  signOut(): Promise<void>;
  /** Sets the session opened elsewhere (password setup). */
  opened(session: AppSession): void;
}

const SessionContext = createContext<SessionState | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<AppSession | null | undefined>(undefined);
  const [expired, setExpired] = useState(false);

  useEffect(() => {
    request<AppSession>('/app/api/session')
      .then(setSession)
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 401) setSession(null);
        else setSession(null);
      });
  }, []);

  // A 401 while signed in means the session ended under the app: keep the screen (and whatever
  // is being typed) and ask to sign in again over it.
  useEffect(() => onSessionEnded(() => setExpired(true)), []);

  // A tab left open may come back to a session that ended meanwhile (expired overnight, signed out
  // in another tab, revoked): asking when it shows again says so at once, not at the first save.
  const signedIn = Boolean(session);
  useEffect(() => {
    if (!signedIn) return;
    const recheck = () => {
      // A 401 reaches onSessionEnded above; another failure will show at the next call.
      if (document.visibilityState === 'visible') request<AppSession>('/app/api/session').catch(() => undefined);
    };
    document.addEventListener('visibilitychange', recheck);
    return () => document.removeEventListener('visibilitychange', recheck);
  }, [signedIn]);

  const signIn = useCallback(async (email: string, password: string) => {
    const opened = await request<AppSession>('/app/api/sign-in', { method: 'POST', body: { email, password } });
    setSession(opened);
    setExpired(false);
    window.dispatchEvent(new Event('folio:signed-in'));
  }, []);

  const signOut = useCallback(async () => {
    await request<void>('/app/api/sign-out', { method: 'POST', body: {} }).catch(() => undefined);
    setSession(null);
    setExpired(false);
  }, []);

  const opened = useCallback((s: AppSession) => {
    setSession(s);
    setExpired(false);
  }, []);

  const value = useMemo(() => ({ session, expired, signIn, signOut, opened }), [session, expired, signIn, signOut, opened]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** Runs `callback` each time the person signs in again (after an expired session): pending saves retry. */
export function useOnSignedIn(callback: () => void): void {
  useEffect(() => {
    window.addEventListener('folio:signed-in', callback);
    return () => window.removeEventListener('folio:signed-in', callback);
  }, [callback]);
}
