/**
 * Live co-editing: each page being edited in a change request is a shared Yjs document, served over
 * a WebSocket at `/collab` by Hocuspocus (3.x: 4.x needs Node 22, Folio supports 20) in the API
 * process. Who joins is decided by access.ts, with the API's rights; how a shared page becomes
 * change-request content and back is model.ts; several processes agree through relay.ts.
 *
 * Saving: a short while after the last keystroke (COLLAB_SAVE_DELAY_MS, at most
 * COLLAB_SAVE_MAX_DELAY_MS while typing goes on) and when the last editor leaves, the page is
 * written through the same `editContent` as API edits, and in the same transaction the shared state
 * is stored with the hash of the markdown it was saved as. The write is refused (and retried after
 * catching up) when the stored page moved since (an API write, an update from the space) or when
 * another process saved state this one has not seen: a save never discards what it did not see.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Hocuspocus, type Document, type onAuthenticatePayload, type onChangePayload, type onLoadDocumentPayload, type onStoreDocumentPayload } from '@hocuspocus/server';
import * as decoding from 'lib0/decoding';
import { WebSocketServer, type WebSocket } from 'ws';
import * as Y from 'yjs';
import { applyAwarenessUpdate, encodeAwarenessUpdate } from 'y-protocols/awareness';
import type { Ctx, Services } from '../platform/context.ts';
import { authenticateTokenHash, hashToken, TOKENS_TOPIC } from '../platform/auth.ts';
import type { Db } from '../platform/db/database.ts';
import { ContentReader, getDocuments } from '../content/model.ts';
import { loadRevision } from '../content/service.ts';
import { documentInputToMarkdown } from '../content/convert.ts';
import { keepMentionText } from '../content/markdown/mention-text.ts';
import { editContent } from '../change-requests/edit.ts';
import { registerLiveEditSaver, watchChangeRequests } from '../change-requests/hooks.ts';
import { addContributor } from '../change-requests/store.ts';
import { AccessRefused, accessTo, parseDocumentName, sessionOfUpgrade, type Access, type PageAddress } from './access.ts';
import { absorb, documentOf, externalChange, stateFromMarkdown } from './model.ts';
import { isClientMessage } from './messages.ts';
import { Relay, type RelayMessage } from './relay.ts';
import { lockNewState, lockState, putState, type SharedState } from './store.ts';

/** Where editors connect (ws:// or wss:// on PUBLIC_URL). */
export const COLLAB_PATH = '/collab';

/** The origin of updates from other processes: they are theirs to save and not to relay again. */
const RELAYED = Symbol('relayed');
/** The origin of changes read from storage (a save of another process, an API write). */
const STORED = Symbol('stored');

/** Most shared pages one connection may open (each is authenticated and loaded). */
const MAX_DOCUMENTS_PER_CONNECTION = 20;

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A shared page open in this process. */
interface LivePage {
  address: PageAddress;
  organizationId: string;
  /** The hash and text of the page's markdown as last saved or read. */
  baseHash: string;
  baseMarkdown: string;
  /** Who typed since the last save (the save is theirs: contributors of the change request). */
  writers: Map<string, Ctx>;
  lastWriter: Ctx | undefined;
  /** Saves and catch-ups of this page, one after the other. */
  queue: Promise<void>;
  /** A pending check that typing relayed from another process was saved as content there (`adoptLater`). */
  adoptTimer?: NodeJS.Timeout | undefined;
}

interface ConnectionContext {
  session?: string | undefined;
  credential?: string;
  access?: Access;
}

/** A save that must first catch up: the stored page moved (`external`) or another process saved more (`behind`). */
class StaleState extends Error {
  constructor(readonly external: boolean) {
    super(external ? 'the page changed outside the editors' : 'another process saved more');
  }
}

class PageGone extends Error {}

export class CollabServer {
  readonly hocuspocus: Hocuspocus;
  private readonly sockets: WebSocketServer;
  private readonly pages = new Map<string, LivePage>();
  /** The credential each writer's context was authenticated with (checked again before saving for them). */
  private readonly credentials = new WeakMap<Ctx, string>();
  private readonly relay: Relay;
  private readonly unwatch: () => void;
  private readonly unregisterSaver: () => void;
  private readonly recheckTimer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly services: Services,
    private readonly log?: Logger,
  ) {
    const settings = services.config.collab;
    this.sockets = new WebSocketServer({ noServer: true, maxPayload: settings.maxMessageBytes });
    this.hocuspocus = new Hocuspocus({
      name: 'folio',
      quiet: true,
      debounce: settings.saveDelayMs,
      maxDebounce: settings.saveMaxDelayMs,
      unloadImmediately: true,
      onAuthenticate: (data) => this.authenticate(data),
      onLoadDocument: (data) => this.load(data),
      onStoreDocument: (data) => this.store(data),
      onChange: async (data) => this.changed(data),
      afterLoadDocument: async ({ document }) => this.followPresence(document),
      afterUnloadDocument: async ({ documentName }) => void this.pages.delete(documentName),
    });
    this.relay = new Relay(services.bus, services.db, (m) => this.relayed(m), () => this.resync(), log);
    this.unwatch = watchChangeRequests((e) => void this.relay.send({ t: 'c', cr: e.changeRequestId }).catch((err) => this.log?.warn({ err }, 'collab: change not announced')));
    this.unregisterSaver = registerLiveEditSaver((changeRequestId) => this.saveChangeRequest(changeRequestId));
    this.recheckTimer = setInterval(() => void this.recheck(), settings.recheckMs);
    this.recheckTimer.unref();
    // A revoked token or an ended session (in any process) ends its connections at once.
    services.bus.subscribe(TOKENS_TOPIC, () => this.recheckSoon());
  }

  /** Serves `/collab` upgrades of `server`; other upgrade paths are refused. */
  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (request.url ?? '/').split('?')[0];
      if (path !== COLLAB_PATH || this.closed) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
        return;
      }
      this.sockets.handleUpgrade(request, socket, head, (ws) => this.connected(ws, request));
    });
  }

  /** Saves every open page, closes every connection, stops following changes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.recheckTimer);
    this.unwatch();
    this.unregisterSaver();
    for (const [name, document] of this.hocuspocus.documents) await this.save(name, document).catch(() => undefined);
    this.hocuspocus.closeConnections();
    for (const ws of this.sockets.clients) ws.terminate();
    await new Promise<void>((resolve) => this.sockets.close(() => resolve()));
  }

  /** Shared pages open here and their connections (metrics, tests). */
  stats(): { pages: number; connections: number } {
    let connections = 0;
    for (const document of this.hocuspocus.documents.values()) connections += document.getConnectionsCount();
    return { pages: this.hocuspocus.documents.size, connections };
  }

  private connected(ws: WebSocket, request: IncomingMessage): void {
    const { maxMessagesPerSecond } = this.services.config.collab;
    // A token bucket: bursts of a few seconds' worth, then the average rate; beyond it the
    // connection is closed (the client reconnects and catches up from the shared state).
    const burst = maxMessagesPerSecond * 5;
    let tokens = burst;
    let last = Date.now();
    const names = new Set<string>();
    ws.on('error', () => ws.terminate());
    // Every message is checked before any listener (Hocuspocus's) hears it: over the rate, or not
    // a well-formed client message, and the connection ends there.
    const emit = ws.emit.bind(ws);
    ws.emit = ((event: string, ...args: unknown[]) => {
      if (event !== 'message') return emit(event, ...args);
      const now = Date.now();
      tokens = Math.min(burst, tokens + ((now - last) / 1000) * maxMessagesPerSecond);
      last = now;
      if (--tokens < 0) {
        ws.close(1008, 'too many messages');
        return false;
      }
      const data = toBytes(args[0]);
      if (!data || !isClientMessage(data)) {
        ws.close(1007, 'malformed message');
        return false;
      }
      names.add(decoding.readVarString(decoding.createDecoder(data)));
      if (names.size > MAX_DOCUMENTS_PER_CONNECTION) {
        ws.close(1008, `at most ${MAX_DOCUMENTS_PER_CONNECTION} pages per connection`);
        return false;
      }
      return emit(event, ...args);
    }) as typeof ws.emit;
    const context: ConnectionContext = { session: sessionOfUpgrade(request, this.services) };
    this.hocuspocus.handleConnection(ws as never, request, context);
  }

  private async authenticate(data: onAuthenticatePayload): Promise<ConnectionContext> {
    const address = parseDocumentName(data.documentName);
    if (!address) throw { reason: 'not-found: a shared page is named <spaceId>/<changeRequestId>/<pageId>' };
    const context = data.context as ConnectionContext;
    const credential = data.token || context.session;
    try {
      const access = await accessTo(this.services, credential, address);
      data.connectionConfig.readOnly = access.readOnly;
      return { credential: credential!, access };
    } catch (err) {
      // Hocuspocus tells the client `reason`; an object without a message keeps refusals out of its error log.
      if (err instanceof AccessRefused) throw { reason: err.reason };
      throw err;
    }
  }

  /** The page's markdown at the change request's head (undefined: the page is gone), and whether the change request still takes edits. */
  private async storedPage(db: Db, organizationId: string, address: PageAddress) {
    const cr = await db
      .selectFrom('change_requests')
      .innerJoin('spaces', 'spaces.id', 'change_requests.space_id')
      .select(['change_requests.revision', 'change_requests.status', 'spaces.edit_mode'])
      .where('change_requests.organization_id', '=', organizationId)
      .where('change_requests.id', '=', address.changeRequestId)
      .where('change_requests.space_id', '=', address.spaceId)
      .executeTakeFirst();
    if (!cr) return undefined;
    const head = await loadRevision(db, address.spaceId, cr.revision);
    const entry = await new ContentReader(db, head.root).page(address.pageId);
    if (!entry) return undefined;
    const hash = entry.doc ?? '';
    const markdown = hash ? ((await getDocuments(db, [hash])).get(hash) ?? '') : '';
    return { hash, markdown, open: cr.status !== 'merged' && cr.status !== 'archived' && cr.edit_mode !== 'locked' };
  }

  private async load(data: onLoadDocumentPayload): Promise<void> {
    const context = data.context as ConnectionContext;
    const address = parseDocumentName(data.documentName)!;
    const organizationId = context.access!.organizationId;
    const loaded = await this.sharedState(organizationId, address, { create: true });
    if (!loaded?.shared) throw new AccessRefused('not-found: no such page in the change request');
    Y.applyUpdate(data.document, loaded.shared.state, STORED);
    this.pages.set(data.documentName, {
      address,
      organizationId,
      baseHash: loaded.stored.hash,
      baseMarkdown: loaded.stored.markdown,
      writers: new Map(),
      lastWriter: undefined,
      queue: Promise.resolve(),
    });
    // Other processes holding this page send what they have that the stored state lacks.
    if (this.relay.shared) void this.relay.send({ t: 's', d: data.documentName, b: Y.encodeStateVector(data.document) }).catch(() => undefined);
  }

  private async changed(data: onChangePayload): Promise<void> {
    if (data.transactionOrigin === (RELAYED as never)) return;
    const page = this.pages.get(data.documentName);
    const access = (data.context as ConnectionContext | undefined)?.access;
    if (page && access && data.transactionOrigin) {
      this.credentials.set(access.ctx, (data.context as ConnectionContext).credential!);
      page.writers.set(access.ctx.user.id, access.ctx);
      page.lastWriter = access.ctx;
    }
    if (this.relay.shared) await this.relay.send({ t: 'u', d: data.documentName, b: data.update }).catch((err) => this.log?.warn({ err }, 'collab: update not relayed'));
  }

  private followPresence(document: Document): void {
    if (!this.relay.shared) return;
    document.awareness.on('update', ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
      if (origin === RELAYED) return;
      const clients = [...added, ...updated, ...removed];
      if (clients.length) void this.relay.send({ t: 'a', d: document.name, b: encodeAwarenessUpdate(document.awareness, clients) }).catch(() => undefined);
    });
  }

  private relayed(message: RelayMessage): void {
    if (message.t === 'c') {
      for (const [name, page] of this.pages) if (page.address.changeRequestId === message.cr) void this.catchUp(name);
      return;
    }
    const document = this.hocuspocus.documents.get(message.d);
    if (!document || document.isLoading) return;
    try {
      if (message.t === 'u') Y.applyUpdate(document, message.b, RELAYED);
      else if (message.t === 'a') applyAwarenessUpdate(document.awareness, message.b, RELAYED);
      else {
        const missing = Y.encodeStateAsUpdate(document, message.b);
        void this.relay.send({ t: 'u', d: message.d, b: missing }).catch(() => undefined);
        const present = [...document.awareness.getStates().keys()];
        if (present.length) void this.relay.send({ t: 'a', d: message.d, b: encodeAwarenessUpdate(document.awareness, present) }).catch(() => undefined);
      }
    } catch (err) {
      this.log?.warn({ err, document: message.d }, 'collab: a relayed message could not be applied');
    }
  }

  /** The bus may have lost messages: ask the other processes again for what each page lacks. */
  private resync(): void {
    for (const [name, document] of this.hocuspocus.documents) {
      void this.relay.send({ t: 's', d: name, b: Y.encodeStateVector(document) }).catch(() => undefined);
      void this.catchUp(name);
    }
  }

  private enqueue(page: LivePage, work: () => Promise<void>): Promise<void> {
    const next = page.queue.then(work, work);
    page.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Brings a change of the stored page into the live one: an API write or an update from the
   * space is merged in three ways (model.ts), a save of another process is absorbed; a page
   * deleted from the change request ends its connections; a merged or archived change request, or
   * a locked space, leaves its editors reading.
   */
  private catchUp(name: string): Promise<void> {
    const page = this.pages.get(name);
    const document = this.hocuspocus.documents.get(name);
    if (!page || !document) return Promise.resolve();
    return this.enqueue(page, async () => {
      const stored = await this.catchUpNow(page, document);
      if (!stored) {
        for (const connection of document.getConnections()) connection.close({ code: 4404, reason: 'The page was deleted from the change request' });
      } else if (!stored.open) {
        for (const connection of document.getConnections()) connection.readOnly = true;
        document.broadcastStateless(JSON.stringify({ type: 'read-only', message: 'The change request was merged or archived, or the space locked: the page is read only now' }));
      }
    }).catch((err) => this.log?.warn({ err, document: name }, 'collab: could not catch up with the stored page'));
  }

  private async store(data: onStoreDocumentPayload): Promise<void> {
    await this.save(data.documentName, data.document).catch((err) => {
      this.log?.error({ err, document: data.documentName }, 'collab: the page could not be saved');
      data.document.broadcastStateless(JSON.stringify({ type: 'save-failed', message: err instanceof Error ? err.message : String(err) }));
    });
  }

  /** Saves the live page now (one save or catch-up of a page at a time). */
  save(name: string, document: Document): Promise<void> {
    const page = this.pages.get(name);
    if (!page) return Promise.resolve();
    return this.enqueue(page, () => this.saveNow(page, document));
  }

  /** The writers whose credential still authenticates (a save never acts for an ended session). */
  private async stillValid(writers: Ctx[]): Promise<Ctx[]> {
    const valid: Ctx[] = [];
    for (const writer of writers) {
      const credential = this.credentials.get(writer);
      const auth = credential ? await authenticateTokenHash(this.services.db, hashToken(credential), this.services.tokenCache) : undefined;
      if (auth && auth.user.id === writer.user.id) valid.push(writer);
    }
    return valid;
  }

  private async saveChangeRequest(changeRequestId: string): Promise<void> {
    const saves: Promise<void>[] = [];
    for (const [name, page] of this.pages) {
      const document = this.hocuspocus.documents.get(name);
      if (page.address.changeRequestId === changeRequestId && document) saves.push(this.save(name, document));
    }
    await Promise.all(saves);
  }

  private async saveNow(page: LivePage, document: Document): Promise<void> {
    const ids = { organizationId: page.organizationId, changeRequestId: page.address.changeRequestId, pageId: page.address.pageId };
    for (let attempt = 0; attempt < 5; attempt++) {
      const state = Y.encodeStateAsUpdate(document);
      const json = documentOf(document);
      // As an edit through the API stores it: mentions keep the texts the stored page gave them.
      const markdown = keepMentionText(await documentInputToMarkdown(json, 'document'), page.baseMarkdown);
      const typists = [...page.writers.values()];
      const writers = await this.stillValid(typists);
      // The stored page must still be what this process last saw, holding nothing it lacks.
      const guard = async (trx: Db, storedHash: string) => {
        const row = await lockState(trx, ids.changeRequestId, ids.pageId);
        if ((row?.baseHash ?? page.baseHash) !== storedHash) throw new StaleState(true);
        if (row && row.baseHash !== page.baseHash) {
          page.baseHash = row.baseHash;
          page.baseMarkdown = (await getDocuments(trx, [row.baseHash])).get(row.baseHash) ?? '';
        }
        if (row && absorb(document, row.state, STORED)) throw new StaleState(false);
      };
      try {
        if (markdown !== page.baseMarkdown && writers.length === 0 && typists.length > 0) {
          // Typed here by people whose session has since ended: kept in the live page (their
          // editors send it again once they sign in), never saved in their name.
          return;
        }
        if (markdown === page.baseMarkdown || writers.length === 0) {
          // The text is what is stored: keep the shared state only (a restart resumes it).
          const unsaved = await this.services.db.transaction().execute(async (trx) => {
            const stored = await this.storedPage(trx, page.organizationId, page.address);
            if (!stored) throw new PageGone();
            await guard(trx, stored.hash);
            await putState(trx, ids, { state, baseHash: stored.hash });
            return markdown !== stored.markdown ? stored.hash : undefined;
          });
          // Typing relayed from another process, which saves it as content: unless it died first.
          if (unsaved !== undefined && writers.length === 0) this.adoptLater(page, document, unsaved);
        } else {
          let saved: { hash: string; markdown: string } | undefined;
          const writer = page.lastWriter ?? writers[writers.length - 1]!;
          await editContent(writer, page.address.spaceId, page.address.changeRequestId, [{ operation: 'update_page', page: page.address.pageId, document: { document: json } }] as never, {
            guard: async (trx, head) => {
              const entry = await head.page(page.address.pageId);
              if (!entry) throw new PageGone();
              await guard(trx, entry.doc ?? '');
            },
            after: async (trx, edited) => {
              const hash = (await edited.page(page.address.pageId))?.doc ?? '';
              await putState(trx, ids, { state, baseHash: hash });
              for (const other of writers) if (other !== writer) await addContributor(trx, ids.changeRequestId, other.user.id);
              saved = { hash, markdown: hash ? ((await getDocuments(trx, [hash])).get(hash) ?? '') : '' };
            },
          });
          page.baseHash = saved!.hash;
          page.baseMarkdown = saved!.markdown;
        }
        for (const writer of writers) if (page.writers.get(writer.user.id) === writer) page.writers.delete(writer.user.id);
        // Editors learn what is saved: each compares the state vector with what it typed.
        document.broadcastStateless(JSON.stringify({ type: 'saved', sv: Buffer.from(Y.encodeStateVectorFromUpdate(state)).toString('base64') }));
        return;
      } catch (err) {
        if (err instanceof PageGone) return;
        if (!(err instanceof StaleState)) throw err;
        if (err.external && !(await this.catchUpNow(page, document))) return;
      }
    }
    throw new Error('the page kept changing while it was being saved: the next save tries again');
  }

  /**
   * The page holds text that is not its stored content and that no editor of this process typed:
   * typing relayed from another process, whose save writes it. When that save has not come a
   * save window later (the other process died in between), an editor of this process who may
   * write saves it: the text then reaches the change request (the API, a merge) instead of
   * staying in the shared state until someone types again.
   */
  private adoptLater(page: LivePage, document: Document, storedHash: string): void {
    if (page.adoptTimer || this.closed) return;
    const { saveDelayMs, saveMaxDelayMs } = this.services.config.collab;
    page.adoptTimer = setTimeout(() => {
      page.adoptTimer = undefined;
      if (this.closed || this.pages.get(document.name) !== page) return;
      void this.enqueue(page, async () => {
        const stored = await this.storedPage(this.services.db, page.organizationId, page.address);
        // Saved meanwhile (by the other process, or here), or gone.
        if (!stored || stored.hash !== storedHash || page.writers.size > 0) return;
        const connection = document.getConnections().find((c) => !c.readOnly && (c.context as ConnectionContext).access);
        const context = connection?.context as ConnectionContext | undefined;
        const ctx = context?.access?.ctx;
        if (!ctx || !context?.credential) return;
        // Its credential is checked again before the save, as a typist's is.
        this.credentials.set(ctx, context.credential);
        page.writers.set(ctx.user.id, ctx);
        page.lastWriter = ctx;
        await this.saveNow(page, document);
      }).catch((err) => this.log?.warn({ err, document: document.name }, 'collab: relayed typing could not be saved'));
    }, saveDelayMs + saveMaxDelayMs + 1000);
    page.adoptTimer.unref();
  }

  /**
   * The page's shared state as stored, brought up to its stored markdown in one transaction: made
   * from the markdown for a page not shared yet (`create`, under the first-load lock), or moved by
   * a change made outside the editors (merged in three ways, model.ts). Undefined: the page is gone.
   */
  private async sharedState(organizationId: string, address: PageAddress, opts: { create: boolean }) {
    const ids = { organizationId, changeRequestId: address.changeRequestId, pageId: address.pageId };
    return this.services.db.transaction().execute(async (trx) => {
      if (opts.create) await lockNewState(trx, ids.changeRequestId, ids.pageId);
      const row = await lockState(trx, ids.changeRequestId, ids.pageId);
      const stored = await this.storedPage(trx, organizationId, address);
      if (!stored) return undefined;
      if (row?.baseHash === stored.hash) return { stored, shared: row };
      if (!row && !opts.create) return { stored, shared: undefined };
      const shared: SharedState = {
        state: row ? await externalChange(row.state, stored.markdown) : await stateFromMarkdown(stored.markdown),
        baseHash: stored.hash,
      };
      await putState(trx, ids, shared);
      return { stored, shared };
    });
  }

  /** catchUp's work, run within the page's queue; answers the stored page (undefined: it is gone). */
  private async catchUpNow(page: LivePage, document: Document) {
    const outcome = await this.sharedState(page.organizationId, page.address, { create: false });
    if (!outcome) return undefined;
    // Whatever the stored state holds that the live page lacks (an API write merged in three
    // ways, another process's save) goes in; what the page holds already changes nothing.
    if (outcome.shared) absorb(document, outcome.shared.state, STORED);
    page.baseHash = outcome.stored.hash;
    page.baseMarkdown = outcome.stored.markdown;
    return outcome.stored;
  }

  private recheckQueued = false;

  private recheckSoon(): void {
    if (this.recheckQueued || this.closed) return;
    this.recheckQueued = true;
    setImmediate(() => {
      this.recheckQueued = false;
      void this.recheck();
    });
  }

  /** Checks every connection's access again: a revoked token, an ended session or a removed member is disconnected; a lost edit right leaves it reading. */
  private async recheck(): Promise<void> {
    const checked = new Map<string, Promise<Access | AccessRefused>>();
    for (const [name, document] of this.hocuspocus.documents) {
      const address = parseDocumentName(name);
      if (!address) continue;
      for (const connection of document.getConnections()) {
        const context = connection.context as ConnectionContext;
        if (!context.credential) continue;
        const key = `${context.credential}\n${name}`;
        if (!checked.has(key)) checked.set(key, accessTo(this.services, context.credential, address).catch((err) => (err instanceof AccessRefused ? err : new AccessRefused('error'))));
        const access = await checked.get(key)!;
        if (access instanceof AccessRefused) {
          if (access.reason === 'error') continue; // the database hiccuped: check again next time
          connection.close({ code: 4403, reason: `access ended: ${access.reason}`.slice(0, 120) });
        } else {
          connection.readOnly = access.readOnly;
          context.access = access;
        }
      }
    }
  }
}

function toBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (Array.isArray(data) && data.every((d) => d instanceof Uint8Array)) return new Uint8Array(Buffer.concat(data));
  return undefined;
}

/** The CollabServer of a Folio process, when it serves co-editing. */
export function startCollab(services: Services, server: Server, log?: Logger): CollabServer {
  const collab = new CollabServer(services, log);
  collab.attach(server);
  return collab;
}
