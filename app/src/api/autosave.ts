import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './client.ts';
import { useOnSignedIn } from '../session.tsx';

export type SaveState = 'saved' | 'unsaved' | 'saving' | 'signed-out' | 'error';

const DELAY_MS = 700;

/** The draft kept in the browser for `key` (an unsaved edit from before a reload or a crash), if any. */
export function storedDraft<T>(key: string): T | undefined {
  try {
    const text = localStorage.getItem(key);
    return text ? (JSON.parse(text) as T) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Saves the latest value a short while after the last change, one save at a time. A value the
 * server does not have yet is kept in localStorage under `key` when a save fails and when the tab
 * hides or closes: a closed tab or an ended session loses nothing. A save refused because the
 * session ended waits for the next sign-in.
 */
export function useAutosave<T>(key: string, save: (value: T) => Promise<void>) {
  const [state, setState] = useState<SaveState>('saved');
  const [error, setError] = useState<string>();
  const pending = useRef<T | undefined>(undefined);
  const saving = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const saveRef = useRef(save);
  saveRef.current = save;

  const flush = useCallback(async () => {
    clearTimeout(timer.current);
    if (saving.current || pending.current === undefined) return;
    const value = pending.current;
    saving.current = true;
    setState('saving');
    try {
      await saveRef.current(value);
      if (pending.current === value) {
        pending.current = undefined;
        localStorage.removeItem(key);
        setState('saved');
        setError(undefined);
      }
    } catch (err) {
      keep();
      if (err instanceof ApiError && err.status === 401) setState('signed-out');
      else {
        setState('error');
        setError(err instanceof Error ? err.message : String(err));
      }
      saving.current = false;
      return;
    }
    saving.current = false;
    // Changes made while saving: save them too.
    if (pending.current !== undefined) void flush();
  }, [key]);

  /** Keeps the unsaved value in the browser (a big page's JSON costs milliseconds: not on every change). */
  const keep = useCallback(() => {
    if (pending.current === undefined) return;
    try {
      localStorage.setItem(key, JSON.stringify(pending.current));
    } catch {
      // Storage full or denied: the server save still runs.
    }
  }, [key]);

  const change = useCallback(
    (value: T) => {
      pending.current = value;
      setState((s) => (s === 'signed-out' ? s : 'unsaved'));
      clearTimeout(timer.current);
      timer.current = setTimeout(() => void flush(), DELAY_MS);
    },
    [key, flush],
  );

  useOnSignedIn(useCallback(() => void flush(), [flush]));

  useEffect(() => {
    const warn = (event: BeforeUnloadEvent) => {
      if (pending.current !== undefined) event.preventDefault();
    };
    // The tab is going away or into the background: keep what the server does not have yet.
    const hide = () => keep();
    window.addEventListener('beforeunload', warn);
    window.addEventListener('pagehide', hide);
    document.addEventListener('visibilitychange', hide);
    return () => {
      window.removeEventListener('beforeunload', warn);
      window.removeEventListener('pagehide', hide);
      document.removeEventListener('visibilitychange', hide);
      keep();
      // Leaving the page: save what is left now rather than after the delay.
      if (pending.current !== undefined) void flush();
    };
  }, [flush, keep]);

  return { state, error, change, flush };
}

export function saveStateText(state: SaveState, error?: string): string {
  switch (state) {
    case 'saved':
      return 'All changes saved';
    case 'unsaved':
      return 'Unsaved changes';
    case 'saving':
      return 'Saving…';
    case 'signed-out':
      return 'Not saved: sign in again to save';
    case 'error':
      return `Not saved: ${error ?? 'error'}`;
  }
}
