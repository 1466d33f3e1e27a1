import type { Db } from './db/database.ts';

/**
 * Extension points of a lower area: it announces what it did, inside its own transaction, and the
 * areas built on it react (a deleted space leaves the sites that published it, a copied space is
 * indexed for search). The reactions are registered at start (src/wiring.ts), so the lower area
 * never imports the areas above it, and they run in the same transaction: all or nothing.
 */
export class Hooks<Events extends Record<string, unknown>> {
  private readonly handlers = new Map<keyof Events, Array<(trx: Db, event: never) => Promise<void>>>();

  on<K extends keyof Events>(name: K, handler: (trx: Db, event: Events[K]) => Promise<void>): void {
    const list = this.handlers.get(name) ?? [];
    list.push(handler as (trx: Db, event: never) => Promise<void>);
    this.handlers.set(name, list);
  }

  /** Runs the handlers of `name` one after the other, in the caller's transaction. */
  async run<K extends keyof Events>(name: K, trx: Db, event: Events[K]): Promise<void> {
    for (const handler of this.handlers.get(name) ?? []) await (handler as (trx: Db, event: Events[K]) => Promise<void>)(trx, event);
  }
}
