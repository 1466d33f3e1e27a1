/**
 * A page of a change request edited live with everyone else on it: a Yjs document kept in sync
 * with Folio's co-editing server (`/collab`, src/collab/) by the Hocuspocus provider. The server
 * saves it into the change request; this hook says what is saved, who else is here, and keeps
 * what the server has not saved yet in localStorage (a closed tab or an ended session loses
 * nothing: the kept state is merged back when the page opens again).
 *
 * The connection authenticates with the session cookie (same origin). When the session ends the
 * server disconnects; typing goes on in the document, and once signed in again a new connection
 * sends it all.
 */
import { HocuspocusProvider } from '@hocuspocus/provider';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import * as Y from 'yjs';
import { sessionEnded } from './client.ts';
import type { SaveState } from './save-state.ts';
import { yXmlFragmentToProseMirrorRootNode } from '@tiptap/y-tiptap';
import { editorSchema, fromProseMirrorNode, type JSONDocument } from '../editor/convert.ts';
import { useOnSignedIn } from '../session.tsx';
import { PEER_PALETTE, paletteIndex } from '../editor/collab.ts';

export interface Peer {
  clientId: number;
  name: string;
  color: number;
}

export interface SharedPage {
  doc: Y.Doc;
  provider: HocuspocusProvider | null;
  /** True once the page's content arrived from the server (the editor is made then). */
  synced: boolean;
  /** True when the server lets this person follow along only. */
  readOnly: boolean;
  state: SaveState;
  error: string | undefined;
  /** The others editing or reading the page now. */
  peers: Peer[];
}

/** A person's caret colour (one of the palette's, the same in every session). */
export function colorOf(id: string): string {
  let hash = 0;
  for (const ch of id) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PEER_PALETTE[hash % PEER_PALETTE.length]!;
}

/** The GitBook document a shared page holds (the kept draft's readable copy). */
export function sharedDocument(doc: Y.Doc): JSONDocument {
  return fromProseMirrorNode(yXmlFragmentToProseMirrorRootNode(doc.getXmlFragment('default'), editorSchema()));
}

function collabUrl(): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/collab`;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** What is kept in the browser for a shared page: its Yjs state (merged back on return) and its text as a GitBook document (readable). */
interface KeptDraft {
  yjs: string;
  document?: unknown;
}

export function useSharedPage(opts: {
  name: string;
  draftKey: string;
  user: { id: string; name: string } | undefined;
  /** The page as a GitBook document, for the kept draft's readable copy. */
  documentOf?: (doc: Y.Doc) => unknown;
}): SharedPage {
  const { name, draftKey } = opts;
  const documentOf = useRef(opts.documentOf);
  documentOf.current = opts.documentOf;
  const doc = useMemo(() => new Y.Doc(), [name]);
  const [generation, setGeneration] = useState(0);
  const [provider, setProvider] = useState<HocuspocusProvider | null>(null);
  const [synced, setSynced] = useState(false);
  const [readOnly, setReadOnly] = useState(false);
  const [state, setState] = useState<SaveState>('saved');
  const [error, setError] = useState<string>();
  const [peers, setPeers] = useState<Peer[]>([]);
  const dirty = useRef(false);
  const signedOut = useRef(false);
  const askTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const askWhenIdle = useCallback(() => {
    clearTimeout(askTimer.current);
    askTimer.current = setTimeout(() => {
      if (signedOut.current) sessionEnded();
    }, 1500);
  }, []);

  // What was kept from an earlier visit goes back into the document before it connects.
  useEffect(() => {
    try {
      const kept = JSON.parse(localStorage.getItem(draftKey) ?? 'null') as KeptDraft | null;
      if (kept?.yjs) {
        Y.applyUpdate(doc, fromBase64(kept.yjs), 'kept');
        dirty.current = true;
        setState('unsaved');
      }
    } catch {
      localStorage.removeItem(draftKey);
    }
    return () => doc.destroy();
  }, [doc, draftKey]);

  const keep = useCallback(() => {
    if (!dirty.current) return;
    let readable: unknown;
    try {
      readable = documentOf.current?.(doc);
    } catch {
      // The Yjs state alone is enough to bring the typing back.
    }
    try {
      const kept: KeptDraft = { yjs: toBase64(Y.encodeStateAsUpdate(doc)), document: readable };
      localStorage.setItem(draftKey, JSON.stringify(kept));
    } catch {
      // Storage full or denied: the server still has what it received.
    }
  }, [doc, draftKey]);

  // Local changes (not the server's) are unsaved until the server says it saved them.
  useEffect(() => {
    const changed = (_update: Uint8Array, origin: unknown) => {
      if (origin === provider || origin === 'kept') return;
      dirty.current = true;
      setState((s) => (s === 'signed-out' ? s : 'unsaved'));
      // Signed out, nothing reaches the server: the browser keeps the typing as it goes, and asks
      // to sign in again once the person pauses (a dialog taking the focus mid-word would take
      // the next keystrokes too).
      if (signedOut.current) {
        keep();
        askWhenIdle();
      }
    };
    doc.on('update', changed);
    return () => doc.off('update', changed);
  }, [doc, provider, keep, askWhenIdle]);

  useEffect(() => {
    signedOut.current = false;
    const refused = (reason: string) => {
      if (/unauthenticated/.test(reason)) {
        signedOut.current = true;
        setState('signed-out');
        keep();
        askWhenIdle();
      } else {
        setState('error');
        setError(/not-found/.test(reason) ? 'You no longer have access to this page' : reason.replace(/^access ended: /, ''));
      }
    };
    const next = new HocuspocusProvider({
      url: collabUrl(),
      name,
      document: doc,
      token: '',
      onAuthenticated: ({ scope }: { scope: string }) => setReadOnly(scope === 'readonly'),
      onAuthenticationFailed: ({ reason }: { reason: string }) => refused(reason),
      onSynced: () => setSynced(true),
      onClose: ({ event }: { event: { reason?: string } }) => {
        if (event.reason && /^access ended/.test(event.reason)) refused(event.reason);
      },
      onStateless: ({ payload }: { payload: string }) => {
        let message: { type?: string; sv?: string; message?: string };
        try {
          message = JSON.parse(payload);
        } catch {
          return;
        }
        if (message.type === 'saved' && message.sv) {
          const saved = Y.decodeStateVector(fromBase64(message.sv)).get(doc.clientID) ?? 0;
          const mine = Y.decodeStateVector(Y.encodeStateVector(doc)).get(doc.clientID) ?? 0;
          if (saved >= mine && !next.hasUnsyncedChanges) {
            dirty.current = false;
            localStorage.removeItem(draftKey);
            setState('saved');
            setError(undefined);
          }
        } else if (message.type === 'read-only') {
          setReadOnly(true);
          setError(message.message);
        } else if (message.type === 'save-failed') {
          setState('error');
          setError(message.message);
        }
      },
      onUnsyncedChanges: ({ number }: { number: number }) => {
        if (number === 0 && dirty.current && !signedOut.current) setState('saving');
      },
    } as never);
    setProvider(next);
    return () => {
      next.destroy();
    };
  }, [doc, name, generation, keep, askWhenIdle, draftKey]);

  // Signed in again: a new connection (the new session cookie) sends what was typed meanwhile.
  useOnSignedIn(
    useCallback(() => {
      if (signedOut.current) {
        setState(dirty.current ? 'unsaved' : 'saved');
        setGeneration((g) => g + 1);
      }
    }, []),
  );

  // Who is here: the person's name and colour for the others, and the others' for the page.
  useEffect(() => {
    if (!provider || !opts.user) return;
    const awareness = provider.awareness;
    if (!awareness) return;
    awareness.setLocalStateField('user', { name: opts.user.name, color: colorOf(opts.user.id) });
    const update = () => {
      const others: Peer[] = [];
      awareness.getStates().forEach((value, clientId) => {
        const user = (value as { user?: { name?: string; color?: string } }).user;
        if (clientId !== awareness.clientID && user?.name) others.push({ clientId, name: user.name, color: paletteIndex(user.color) });
      });
      setPeers(others);
    };
    awareness.on('change', update);
    update();
    return () => awareness.off('change', update);
  }, [provider, opts.user?.id, opts.user?.name]);

  // The tab going away or into the background keeps what the server has not saved.
  useEffect(() => {
    const warn = (event: BeforeUnloadEvent) => {
      if (dirty.current) event.preventDefault();
    };
    window.addEventListener('beforeunload', warn);
    window.addEventListener('pagehide', keep);
    document.addEventListener('visibilitychange', keep);
    return () => {
      window.removeEventListener('beforeunload', warn);
      window.removeEventListener('pagehide', keep);
      document.removeEventListener('visibilitychange', keep);
      keep();
    };
  }, [keep]);

  return { doc, provider, synced, readOnly, state, error, peers };
}
