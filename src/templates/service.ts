import { editContent } from '../change-requests/edit.ts';
import { mergeChangeRequest } from '../change-requests/merge.ts';
import { createChangeRequest, loadChangeRequest, updateChangeRequest } from '../change-requests/service.ts';
import type { ContentChangeInput } from '../change-requests/schemas.ts';
import { ContentReader } from '../content/model.ts';
import { loadRevision } from '../content/service.ts';
import type { Ctx } from '../platform/context.ts';
import { BadRequestError, ForbiddenError } from '../platform/errors.ts';
import { assertContentRole } from '../platform/policy.ts';
import { loadSpace } from '../spaces/access.ts';
import { findTemplate, TEMPLATES, type Template, type TemplateInput, type TemplatePage } from '../content/templates.ts';

/** A named content reference of the request body; only file references can be placed. */
export interface ContentRefInput {
  kind: string;
  file?: string | undefined;
  space?: string | undefined;
}

export interface ApplyTemplateInput {
  id: string;
  params?: { contentRefs?: Record<string, ContentRefInput> | undefined } | undefined;
  changeRequestId?: string | undefined;
}

/** The template of an id; 400 naming the known ones when there is none. */
export function templateOf(id: string): Template {
  const template = findTemplate(id);
  if (!template) throw new BadRequestError(`id: unknown template "${id}"; known templates: ${TEMPLATES.map((t) => t.id).join(', ')}`);
  return template;
}

/**
 * Checks the content references against what the template places and the content it lands in
 * (`root`): every one must be a file of this space present there. Answers name → file id.
 */
async function resolveContentRefs(ctx: Ctx, spaceId: string, root: string, template: Template, refs: Record<string, ContentRefInput>) {
  const files = new Map<string, string>();
  const reader = new ContentReader(ctx.db, root);
  for (const [name, ref] of Object.entries(refs)) {
    const where = `params.contentRefs.${name}`;
    if (!(name in template.contentRefs)) {
      const known = Object.keys(template.contentRefs);
      throw new BadRequestError(`${where}: template "${template.id}" places no content reference named "${name}"${known.length ? ` (it places: ${known.join(', ')})` : ''}`);
    }
    if (ref.kind !== 'file' || !ref.file) throw new BadRequestError(`${where}: only file references ({kind: "file", file}) can be placed`);
    if (ref.space !== undefined && ref.space !== spaceId) throw new BadRequestError(`${where}: the file must be in this space`);
    if (!(await reader.file(ref.file))) throw new BadRequestError(`${where}: file ${ref.file} not found in the space's content`);
    files.set(name, ref.file);
  }
  return files;
}

/** The template's pages as one batch of content changes, parents before their children. */
export function templateChanges(template: Template, input: TemplateInput): ContentChangeInput[] {
  const changes: ContentChangeInput[] = [];
  const visit = (pages: TemplatePage[], parent: string | undefined) => {
    for (const page of pages) {
      changes.push({
        operation: 'insert_page',
        // Refs are namespaced so that no link of the template can name a page outside it.
        ref: `template/${page.ref}`,
        title: page.title,
        ...(page.emoji ? { emoji: page.emoji } : {}),
        ...(page.description ? { description: page.description } : {}),
        ...(parent ? { into: parent } : {}),
        document: { markdown: page.markdown(input).replace(/\]\(([a-z0-9-]+)\.md\)/g, '](template/$1)') },
      });
      if (page.pages) visit(page.pages, `template/${page.ref}`);
    }
  };
  visit(template.pages, undefined);
  return changes;
}

/**
 * Applies a template: into the given change request, or (without one) into the space's content
 * through a change request that is merged at once. Merging needs what any merge needs (the review
 * role, a live space, the merge rules): all but the merge rules are checked before anything is
 * written, and a change request whose merge is refused is archived rather than left open.
 */
export async function applyTemplate(ctx: Ctx, spaceId: string, input: ApplyTemplateInput): Promise<void> {
  const now = new Date();
  if (input.changeRequestId !== undefined) {
    const { space, role, cr } = await loadChangeRequest(ctx, spaceId, input.changeRequestId);
    assertContentRole(role, 'edit', 'apply a template');
    const template = templateOf(input.id);
    const head = await loadRevision(ctx.db, space.id, cr.revision);
    const files = await resolveContentRefs(ctx, space.id, head.root, template, input.params?.contentRefs ?? {});
    await editContent(ctx, space.id, cr.id, templateChanges(template, { files, now }));
    return;
  }

  const { space, role } = await loadSpace(ctx, spaceId);
  assertContentRole(role, 'review', "apply a template to the space's content (or apply it into a change request)");
  if (space.edit_mode === 'locked') throw new ForbiddenError('The space is locked: nobody can apply a template until its editMode is "live" again');
  const template = templateOf(input.id);
  const current = await loadRevision(ctx.db, space.id, space.revision_id);
  const files = await resolveContentRefs(ctx, space.id, current.root, template, input.params?.contentRefs ?? {});
  const { cr } = await createChangeRequest(ctx, space.id, { subject: `Apply the "${template.title}" template` });
  try {
    await editContent(ctx, space.id, cr.id, templateChanges(template, { files, now }));
    await mergeChangeRequest(ctx, space.id, cr.id);
  } catch (err) {
    await updateChangeRequest(ctx, space.id, cr.id, { status: 'archived' }).catch(() => undefined);
    throw err;
  }
}
