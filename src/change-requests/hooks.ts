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
