import type { Ctx } from '../platform/context.ts';
import type { Blobs } from '../platform/blob-store.ts';
import type { Db } from '../platform/db/database.ts';
import type { RevisionRow, SpaceRow } from '../platform/db/schema.ts';
import type { Block } from './markdown/shared.ts';

/**
 * What the areas built on content add to its reads, registered at start (src/wiring.ts) so that
 * content never imports them: blocks resolved on `computed=true` reads (OpenAPI blocks, filled
 * from their specs) and the change request a merge revision came from.
 */
export interface ComputedBlocks {
  /** A cheap test on the markdown: may it hold such blocks at all? */
  mayHold(markdown: string): boolean;
  /** Fills the blocks of `document` in place, as `userId` may see their sources. */
  resolve(db: Db, blobs: Blobs, organizationId: string, userId: string | null, document: { nodes?: Block[] }): Promise<void>;
}

export interface ContentExtensions {
  computedBlocks: ComputedBlocks[];
  /** The `mergedFrom` change request of a merge revision (the official Revision requires it). */
  mergedFrom?(ctx: Ctx, space: SpaceRow, revision: RevisionRow): Promise<Record<string, unknown> | undefined>;
}

export const contentExtensions: ContentExtensions = { computedBlocks: [] };

/** Resolves every kind of computed block `document` may hold (`markdown` is its source, for the cheap test). */
export async function resolveComputedBlocks(ctx: Ctx, organizationId: string, markdown: string, document: { nodes?: Block[] }): Promise<boolean> {
  let any = false;
  for (const blocks of contentExtensions.computedBlocks) {
    if (!blocks.mayHold(markdown)) continue;
    await blocks.resolve(ctx.db, ctx.blobs, organizationId, ctx.user.id, document);
    any = true;
  }
  return any;
}

/** Whether any kind of computed block may be in `markdown`. */
export function mayHoldComputedBlocks(markdown: string): boolean {
  return contentExtensions.computedBlocks.some((blocks) => blocks.mayHold(markdown));
}
