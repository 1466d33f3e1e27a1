import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Redis } from 'ioredis';

/**
 * Invalidation messages between the processes of one Folio (API processes and workers): "forget
 * this token", "the published sites changed". A message is a short string on a topic; what it
 * means is decided by the subscriber.
 *
 * Every handler must also understand `RESYNC` ('*'): "you may have missed messages, forget
 * everything". A bus sends it after its connection was lost and came back, so a process never keeps
 * what another process invalidated while it was not listening.
 *
 * Three implementations, chosen by configuration (`openBus`):
 * - `LocalBus`: one process (the embedded database); publish calls the handlers, nothing else.
 * - `PostgresBus`: LISTEN/NOTIFY on the database (`DATABASE_URL` without `REDIS_URL`).
 * - `RedisBus`: Redis pub/sub (`REDIS_URL`).
 *
 * `publish` runs this process's handlers at once (synchronously), then sends the message to the
 * others, which ignore their own messages when they come back. Call it after the change commits:
 * another process that hears it reads the database again.
 */
export interface Bus {
  readonly kind: 'local' | 'postgres' | 'redis';
  /** Told when a message could not be sent or the connection was lost. */
  logger?: Logger | undefined;
  publish(topic: string, message: string): Promise<void>;
  subscribe(topic: string, handler: (message: string) => void): void;
  close(): Promise<void>;
}

/** The message that tells a subscriber to forget everything it caches. */
export const RESYNC = '*';

/**
 * The topic of the published sites' caches (src/published-site/): `SITES_CONTENT` when what a
 * site shows may have changed (a merge, a site's settings or structure), `SITES_HOSTS` when custom
 * hostnames may have changed as well (they are re-read), `RESYNC` for both.
 */
export const SITES_TOPIC = 'sites';
export const SITES_CONTENT = 'content';
export const SITES_HOSTS = 'hosts';

/** The handlers of a process, by topic, shared by every implementation. */
class Handlers {
  private readonly byTopic = new Map<string, Array<(message: string) => void>>();

  add(topic: string, handler: (message: string) => void): void {
    const list = this.byTopic.get(topic) ?? [];
    list.push(handler);
    this.byTopic.set(topic, list);
  }

  deliver(topic: string, message: string): void {
    for (const handler of this.byTopic.get(topic) ?? []) {
      try {
        handler(message);
      } catch {
        // A handler only drops cached state; one failing must not keep the others from hearing.
      }
    }
  }

  resync(): void {
    for (const topic of this.byTopic.keys()) this.deliver(topic, RESYNC);
  }
}

export class LocalBus implements Bus {
  readonly kind: Bus['kind'] = 'local';
  logger: Logger | undefined;
  protected readonly handlers = new Handlers();

  async publish(topic: string, message: string): Promise<void> {
    this.handlers.deliver(topic, message);
  }

  subscribe(topic: string, handler: (message: string) => void): void {
    this.handlers.add(topic, handler);
  }

  async close(): Promise<void> {}
}

interface Envelope {
  /** The process that sent it (it has delivered it to itself already). */
  from: string;
  topic: string;
  message: string;
}

interface Logger {
  warn(obj: object, msg: string): void;
}

/** What remote buses share: an id per process, envelopes, and the resync after a lost connection. */
abstract class RemoteBus extends LocalBus {
  protected readonly id = randomUUID();
  protected closed = false;

  /** Messages being sent: `close` waits for them (a CLI command publishes, then exits). */
  private readonly sending = new Set<Promise<void>>();

  override async publish(topic: string, message: string): Promise<void> {
    this.handlers.deliver(topic, message);
    const envelope: Envelope = { from: this.id, topic, message };
    const sent = this.send(JSON.stringify(envelope)).catch((err: unknown) => {
      // The change has committed; other processes fall back on their caches' TTLs for this one.
      this.logger?.warn({ err }, `bus: could not publish ${topic} (other processes keep their cache until its TTL)`);
    });
    this.sending.add(sent);
    try {
      await sent;
    } finally {
      this.sending.delete(sent);
    }
  }

  /** Waits for the messages being sent. */
  protected async drain(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  protected receive(raw: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(raw) as Envelope;
    } catch {
      return;
    }
    if (envelope.from === this.id || typeof envelope.topic !== 'string' || typeof envelope.message !== 'string') return;
    this.handlers.deliver(envelope.topic, envelope.message);
  }

  protected abstract send(payload: string): Promise<void>;
}

/**
 * LISTEN/NOTIFY on the PostgreSQL database: one connection of its own listens (a pooled connection
 * cannot), notifications are sent through the pool. A lost listening connection is opened again
 * (every second until it succeeds), and the handlers are told to resync.
 */
export class PostgresBus extends RemoteBus {
  override readonly kind = 'postgres' as const;
  private listener: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly connectionString: string,
    private readonly notify: (channel: string, payload: string) => Promise<void>,
    private readonly channel = 'folio_bus',
  ) {
    super();
  }

  /** Listens before the process serves: a start that cannot listen fails (the database is down anyway). */
  async start(): Promise<void> {
    await this.listen();
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', (n) => {
      if (n.channel === this.channel && n.payload) this.receive(n.payload);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.listener = client;
  }

  private lost(client: pg.Client): void {
    if (this.closed || this.listener !== client) return;
    this.listener = undefined;
    this.logger?.warn({}, 'bus: the LISTEN connection to PostgreSQL was lost; opening it again');
    const again = () => {
      this.retry = undefined;
      if (this.closed) return;
      this.listen().then(
        // Whatever was sent while no one listened is lost: forget everything cached.
        () => this.handlers.resync(),
        () => (this.retry = setTimeout(again, 1000)),
      );
    };
    this.retry = setTimeout(again, 100);
  }

  protected send(payload: string): Promise<void> {
    return this.notify(this.channel, payload);
  }

  override async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
  }
}

/**
 * Redis pub/sub: a connection of its own subscribes (a subscribed Redis connection can do nothing
 * else), messages are published through the shared one. ioredis reconnects and subscribes again by
 * itself; each time it does, the handlers are told to resync.
 */
export class RedisBus extends RemoteBus {
  override readonly kind = 'redis' as const;

  constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly channel: string,
  ) {
    super();
  }

  async start(): Promise<void> {
    let ready = false;
    this.subscriber.on('message', (channel: string, payload: string) => {
      if (channel === this.channel) this.receive(payload);
    });
    this.subscriber.on('ready', () => {
      if (ready) this.handlers.resync();
    });
    await this.subscriber.subscribe(this.channel);
    ready = true;
  }

  protected async send(payload: string): Promise<void> {
    await this.redis.publish(this.channel, payload);
  }

  override async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    this.subscriber.disconnect();
  }
}
