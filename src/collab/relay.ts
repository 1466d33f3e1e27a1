/**
 * The shared pages of several Folio processes kept as one: every update a process's editors make
 * (and every presence change) is published on the bus (src/platform/bus.ts: Redis pub/sub with
 * REDIS_URL, else PostgreSQL LISTEN/NOTIFY, else nothing to relay) and applied by the processes
 * that hold the same page. A process that opens a page, or that may have missed messages (the bus
 * reconnected), asks the others for what it lacks by sending its state vector.
 *
 * A NOTIFY payload holds at most 8,000 bytes: a bigger update (a paste) is stored in the
 * `collab_relay` table and the message names its row.
 */
import { randomUUID } from 'node:crypto';
import type { Bus } from '../platform/bus.ts';
import { RESYNC } from '../platform/bus.ts';
import type { Db } from '../platform/db/database.ts';
import { getRelayed, putRelayed } from './store.ts';

export const COLLAB_TOPIC = 'collab';

/** What travels: an update of a page (`u`), presence (`a`), a request for what a state vector lacks (`s`), a change request that changed (`c`). */
export type RelayMessage =
  | { t: 'u' | 'a' | 's'; d: string; b: Uint8Array }
  | { t: 'c'; cr: string };

type Wire = { t: 'u' | 'a' | 's'; p: string; d: string; b?: string; r?: string } | { t: 'c'; cr: string };

/** Inline payloads up to this many characters of base64 (NOTIFY's limit is 8,000 bytes with the envelope). */
const INLINE_LIMIT = 6000;

export class Relay {
  /** This process: the bus delivers a message to its sender too, which needs none of its own updates. */
  private readonly id = randomUUID();

  constructor(
    private readonly bus: Bus,
    private readonly db: Db,
    private readonly onMessage: (message: RelayMessage) => void,
    private readonly onResync: () => void,
    private readonly logger?: { warn(obj: object, msg: string): void },
  ) {
    bus.subscribe(COLLAB_TOPIC, (raw) => void this.receive(raw));
  }

  /** Whether other processes may hold the same pages (one process alone relays nothing but its own change-request notices). */
  get shared(): boolean {
    return this.bus.kind !== 'local';
  }

  async send(message: RelayMessage): Promise<void> {
    if (message.t === 'c') return this.bus.publish(COLLAB_TOPIC, JSON.stringify(message));
    if (!this.shared) return;
    const b = Buffer.from(message.b).toString('base64');
    const wire: Wire =
      b.length <= INLINE_LIMIT || this.bus.kind === 'redis' ? { t: message.t, p: this.id, d: message.d, b } : { t: message.t, p: this.id, d: message.d, r: await putRelayed(this.db, message.b) };
    await this.bus.publish(COLLAB_TOPIC, JSON.stringify(wire));
  }

  private async receive(raw: string): Promise<void> {
    if (raw === RESYNC) return this.onResync();
    let wire: Wire;
    try {
      wire = JSON.parse(raw) as Wire;
    } catch {
      return;
    }
    if (wire.t === 'c') {
      if (typeof wire.cr === 'string') this.onMessage(wire);
      return;
    }
    if (typeof wire.d !== 'string' || wire.p === this.id) return;
    try {
      const bytes = wire.b !== undefined ? Buffer.from(wire.b, 'base64') : wire.r !== undefined ? await getRelayed(this.db, wire.r) : undefined;
      if (bytes) this.onMessage({ t: wire.t, d: wire.d, b: new Uint8Array(bytes) });
    } catch (err) {
      this.logger?.warn({ err }, 'collab: a relayed update could not be read');
    }
  }
}
