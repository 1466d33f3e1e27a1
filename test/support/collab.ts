/**
 * Co-editing clients in Node: the official Hocuspocus provider (what the app uses) over `ws`,
 * holding a Yjs document bound to one shared page. `typeAt` edits its text as an editor would
 * (a Yjs insertion into a paragraph's text), `text()` reads it back.
 */
import { HocuspocusProvider } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';

export interface CollabClient {
  provider: HocuspocusProvider;
  doc: Y.Doc;
  /** Resolves once authenticated and synced (rejects when refused). */
  ready: Promise<void>;
  /** Whether the server made this connection read-only. */
  readOnly(): boolean;
  /** Close events the server sent (code and reason). */
  closes: { code: number; reason: string }[];
  /** Stateless messages the server sent. */
  stateless: string[];
  close(): void;
}

export function collabUrl(serverUrl: string): string {
  return `${serverUrl.replace(/^http/, 'ws')}/collab`;
}

/** `doc`: the editor's document to sync (one kept from an earlier connection, as an editor reconnecting holds its state); a new one by default. */
export function collabClient(serverUrl: string, name: string, token: string, opts: { headers?: Record<string, string>; doc?: Y.Doc } = {}): CollabClient {
  const doc = opts.doc ?? new Y.Doc();
  const closes: { code: number; reason: string }[] = [];
  const stateless: string[] = [];
  let readOnly = false;
  class HeaderSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: opts.headers ?? {} });
    }
  }
  let resolveReady!: () => void;
  let rejectReady!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  const provider = new HocuspocusProvider({
    url: collabUrl(serverUrl),
    name,
    token,
    document: doc,
    WebSocketPolyfill: HeaderSocket,
    onAuthenticated: (data: { scope?: string }) => {
      readOnly = data?.scope === 'readonly';
    },
    onAuthenticationFailed: ({ reason }: { reason: string }) => rejectReady(new Error(`refused: ${reason}`)),
    onSynced: () => resolveReady(),
    onClose: ({ event }: { event: { code: number; reason: string } }) => closes.push({ code: event.code, reason: String(event.reason) }),
    onStateless: ({ payload }: { payload: string }) => stateless.push(payload),
  } as never);
  return {
    provider,
    doc,
    ready,
    readOnly: () => readOnly,
    closes,
    stateless,
    close: () => {
      // A reconnection attempt under way (the server was killed) is cancelled too: left running,
      // its retry timer kept the test process alive after its last test.
      const socket = provider.configuration.websocketProvider as unknown as { cancelWebsocketRetry?: () => void; shouldConnect: boolean };
      socket.shouldConnect = false;
      socket.cancelWebsocketRetry?.();
      provider.destroy();
    },
  };
}

/** The text of the shared page (every text node, blocks separated by new lines). */
export function sharedText(doc: Y.Doc): string {
  const out: string[] = [];
  const walk = (node: Y.XmlElement | Y.XmlFragment | Y.XmlText) => {
    if (node instanceof Y.XmlText) {
      out.push(node.toString().replace(/<[^>]+>/g, ''));
      return;
    }
    for (const child of node.toArray()) walk(child as Y.XmlElement);
    if (node instanceof Y.XmlElement && ['paragraph', 'heading'].includes(node.nodeName)) out.push('\n');
  };
  walk(doc.getXmlFragment('default'));
  return out.join('').trim();
}

/** The first paragraph's text node (where test editors type). */
export function firstText(doc: Y.Doc): Y.XmlText {
  const find = (node: Y.XmlFragment | Y.XmlElement): Y.XmlText | undefined => {
    for (const child of node.toArray()) {
      if (child instanceof Y.XmlText) return child;
      if (child instanceof Y.XmlElement) {
        const found = find(child);
        if (found) return found;
      }
    }
    return undefined;
  };
  const text = find(doc.getXmlFragment('default'));
  if (!text) throw new Error('the shared page has no text');
  return text;
}

/** Types `text` at `index` of the first paragraph, one character per transaction (as keystrokes). */
export function typeAt(doc: Y.Doc, index: number, text: string): void {
  const node = firstText(doc);
  for (const [i, ch] of [...text].entries()) doc.transact(() => node.insert(Math.min(index + i, node.length), ch));
}

/** Waits until `check` holds (checked on every document update and every 20 ms), or fails after `ms`. */
export async function until(check: () => boolean, ms = 5000, what = 'the condition'): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
