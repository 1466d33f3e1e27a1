import type { Ctx } from '../platform/context.ts';
import type { ChangeRequestRow } from '../platform/db/schema.ts';
import { BadRequestError } from '../platform/errors.ts';
import { findTemplate, TEMPLATES } from '../content/templates.ts';
import { changeRequestExtensions } from './hooks.ts';
import { createChangeRequest, loadChangeRequest } from './service.ts';
import * as store from './store.ts';

export interface NewChangeRequestInput {
  subject?: string | undefined;
  conversationsIssuesCluster?: string | null | undefined;
  /** A template written into the new change request as its first edit. */
  template?: { id: string; params?: { contentRefs?: Record<string, { kind: string; file?: string | undefined; space?: string | undefined }> | undefined } | undefined } | undefined;
}

/**
 * Opens a change request, with a template's content when one is named. The template is checked
 * first, and a template that cannot apply leaves no empty change request behind.
 */
export async function openChangeRequest(ctx: Ctx, spaceId: string, input: NewChangeRequestInput): Promise<ChangeRequestRow> {
  const { template } = input;
  const apply = changeRequestExtensions.applyTemplate;
  if (template !== undefined && !apply) throw new Error('templates are not wired (src/wiring.ts)');
  if (template !== undefined && !findTemplate(template.id)) {
    throw new BadRequestError(`template.id: unknown template; known: ${TEMPLATES.map((t) => t.id).join(', ')}`);
  }
  const { cr } = await createChangeRequest(ctx, spaceId, input);
  if (!template) return cr;
  try {
    await apply!(ctx, spaceId, { ...template, changeRequestId: cr.id });
  } catch (err) {
    await store.deleteChangeRequest(ctx.db, cr.organization_id, cr.id);
    throw err;
  }
  return (await loadChangeRequest(ctx, spaceId, cr.id)).cr;
}
