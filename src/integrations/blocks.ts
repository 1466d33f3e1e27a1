import type { Services } from '../platform/context.ts';
import { answerStamp } from '../events/coverage.ts';
import * as store from './store.ts';
import type { Db } from '../platform/db/database.ts';
import { AnswerCache } from './answer-cache.ts';
import { dispatchNow } from './dispatch.ts';

/**
 * Integration blocks (`{% @integration/block prop="…" %}` in a page) as readers see them: the
 * ContentKit the integration's own component answers to a `ui_render` event, from the installation
 * covering the page's space. One answer serves every reader of the same block and props for a
 * minute (or what the component asks with `setCache`, at most five), or until the integration's
 * version or the installation changes; a failure is kept ten seconds.
 */

export interface RenderedBlock {
  /** The component's ContentKit (a `block` element), with its state for dynamic bindings. */
  output?: { element: Record<string, unknown>; state: Record<string, unknown> };
  /** Why there is nothing to show (not installed, no such block, the script failed). */
  error?: string;
}

interface Covering {
  integrationId: string;
  installationId: string;
  blocks: { id?: string }[];
  stamp: string;
}

/** The integration by name and its active installation covering the space (installed there, or on all spaces). */
async function covering(db: Db, name: string, space: { id: string; organization_id: string }): Promise<Covering | undefined> {
  const row = await store.coveringWithBlocks(db, space, name);
  if (!row) return undefined;
  return {
    integrationId: row.id,
    installationId: row.installation_id,
    blocks: row.blocks as { id?: string }[],
    stamp: answerStamp(row.version, row.updated_at, row.installation_updated, row.space_updated),
  };
}

const cache = new AnswerCache<RenderedBlock>(60_000, 5000);
const MAX_TTL_MS = 300_000;
const FAILED_TTL_MS = 10_000;

export async function renderIntegrationBlock(
  services: Services,
  space: { id: string; organization_id: string },
  block: { integration: string; block?: string | undefined; props: Record<string, unknown> },
): Promise<RenderedBlock> {
  const found = await covering(services.db, block.integration, space);
  if (!found) return { error: `The integration ${block.integration} is not installed on this space` };
  const componentId = block.block ?? found.blocks[0]?.id;
  if (!componentId || !found.blocks.some((b) => b.id === componentId)) return { error: `The integration ${block.integration} has no block "${componentId ?? ''}"` };
  const key = `${found.installationId}|${space.id}|${componentId}|${JSON.stringify(block.props)}`;
  return cache.get(key, found.stamp, async (keepFor): Promise<RenderedBlock> => {
    const context = { type: 'document', spaceId: space.id, editable: false, theme: 'light' };
    // The space is named by the context only: the official UIRenderEvent is one of a space, site or
    // installation event, and a payload with `spaceId` would match two of them.
    const outcome = await dispatchNow(services, found, { type: 'ui_render', componentId, props: block.props, context });
    const response = outcome.response;
    let output: { type?: unknown; element?: { type?: unknown }; state?: unknown } | undefined;
    try {
      output = outcome.ok && response ? JSON.parse(response.body) : undefined;
    } catch {
      output = undefined;
    }
    if (!output || output.element?.type !== 'block') {
      keepFor(FAILED_TTL_MS);
      return { error: `The integration ${block.integration} could not render this block${response ? ` (it answered ${response.status})` : ''}` };
    }
    // The component may ask for a cache lifetime (`setCache({ maxAge })`, seconds).
    const maxAge = Number(/max-age=(\d+)/.exec(response?.headers['cache-control'] ?? '')?.[1]);
    if (Number.isFinite(maxAge)) keepFor(Math.min(maxAge * 1000, MAX_TTL_MS));
    const state = output.state && typeof output.state === 'object' ? (output.state as Record<string, unknown>) : {};
    return { output: { element: output.element as Record<string, unknown>, state } };
  });
}
