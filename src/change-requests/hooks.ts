import type { Ctx } from '../platform/context.ts';
import { Hooks } from '../platform/hooks.ts';
import type { Jobs } from '../platform/jobs.ts';

/** What happens to change requests that areas built on them react to (registered in src/wiring.ts). */
export const changeRequestHooks = new Hooks<{
  /** A change request was merged and the merge has committed (git sync queues its export). */
  merged: { organizationId: string; spaceId: string; message: string; jobs: Jobs };
}>();

/**
 * A template's content written into a new change request (`createChangeRequest` with `template`),
 * done by src/templates/, which builds on change requests. Until wired, naming a template fails.
 */
export const changeRequestExtensions: {
  applyTemplate?(ctx: Ctx, spaceId: string, input: { id: string; params?: { contentRefs?: Record<string, { kind: string; file?: string | undefined; space?: string | undefined }> | undefined } | undefined; changeRequestId: string }): Promise<void>;
} = {};

/** A change request whose content or status changed, after the change committed. */
export interface ChangeRequestChanged {
  organizationId: string;
  spaceId: string;
  changeRequestId: string;
}

/**
 * Who follows change requests as they change, in this process (live co-editing, src/collab/,
 * which brings an API write into the editors of the page). Told after the commit; a watcher must
 * not throw, and what it starts runs on its own.
 */
const watchers = new Set<(event: ChangeRequestChanged) => void>();

export function watchChangeRequests(watcher: (event: ChangeRequestChanged) => void): () => void {
  watchers.add(watcher);
  return () => watchers.delete(watcher);
}

export function announceChangeRequest(event: ChangeRequestChanged): void {
  for (const watcher of watchers) {
    try {
      watcher(event);
    } catch {
      // A follower's failure is its own: the change has committed.
    }
  }
}

/**
 * Savers of what is being typed live into a change request (src/collab/, one per server in this
 * process): a merge runs them before it reads the change request.
 */
const liveEditSavers = new Set<(changeRequestId: string) => Promise<void>>();

export function registerLiveEditSaver(saver: (changeRequestId: string) => Promise<void>): () => void {
  liveEditSavers.add(saver);
  return () => liveEditSavers.delete(saver);
}

export async function saveLiveEdits(changeRequestId: string): Promise<void> {
  await Promise.all([...liveEditSavers].map((save) => save(changeRequestId)));
}
