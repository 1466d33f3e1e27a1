import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../platform/context.ts';
import type { PageEntry } from '../content/model.ts';
import { NotFoundError } from '../platform/errors.ts';
import { spacePermissions } from '../platform/policy.ts';
import { orgRoleOf } from '../access/effective.ts';
import { listOrganizationSpaces } from '../spaces/service.ts';
import { currentContent, loadRevision, presentPage, presentPages, readerFor, type ContentTarget } from '../content/service.ts';
import { searchOrganization } from '../search/service.ts';
import { changesOf } from '../change-requests/changes.ts';
import { openChangeRequest } from '../change-requests/create.ts';
import { editContent } from '../change-requests/edit.ts';
import { mergeChangeRequest } from '../change-requests/merge.ts';
import { presentChangeRequests } from '../change-requests/presenter.ts';
import { listChangeRequests, listOrganizationChangeRequests, loadChangeRequest } from '../change-requests/service.ts';
import { answerMcp, mcpServer, tool, type Tool } from './tools.ts';

/**
 * The organization's MCP server, at `/v1/orgs/{organizationId}/mcp`, for its members (and guests)
 * with an API token as bearer, like every /v1 call: search and read across the spaces the token's
 * user can read, and write through change requests (open one, edit or add a page in markdown,
 * list and read them). Every tool calls the service the API's route for the same thing calls,
 * with the caller's context, so each is allowed exactly what the API allows that user: the same
 * policy (src/platform/policy.ts), the same 404 for what they cannot see. Tools the caller could
 * use nowhere are not listed: the write tools need `edit` on some space, merging needs the
 * `merge` permission (`review`) on some space, and each call checks its own space again.
 */

const SERVER_VERSION = '1.0.0';
/** Spaces looked at to decide which write tools to list (an organization's first thousand). */
const SPACES_SCANNED = 1000;

const SpaceId = Type.String({ minLength: 1, maxLength: 100, description: 'The id of the space (from list_spaces or search)' });
const ChangeRequestId = Type.String({ minLength: 1, maxLength: 100, description: 'The change request: its id or its number in the space' });
const PageRef = Type.String({ minLength: 1, maxLength: 2048, description: 'The page: its id, or its path in the space (e.g. guides/install)' });
const closed = { additionalProperties: false } as const;

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** A page of a revision by id, else by path ('' is no page). */
async function findPage(ctx: Ctx, target: ContentTarget, ref: string): Promise<PageEntry> {
  const reader = readerFor(ctx, target);
  const page = (await reader.page(ref)) ?? (await reader.byPath(ref.replace(/^\/+|\/+$/g, '').replace(/\.md$/, '')));
  if (!page) throw new NotFoundError('Page', 'give its id or its path, as list_pages shows them');
  return page;
}

/** The content a read is about: the space's current revision, or a change request's head. */
async function targetOf(ctx: Ctx, spaceId: string, changeRequest?: string): Promise<ContentTarget> {
  if (!changeRequest) return currentContent(ctx, spaceId);
  const { space, cr } = await loadChangeRequest(ctx, spaceId, changeRequest);
  return { space, revision: await loadRevision(ctx.db, space.id, cr.revision), changeRequest: cr.number };
}

type Outline = { id: string; title: string; type: string; path?: string; pages?: Outline[] };
function outline(pages: unknown[]): Outline[] {
  return (pages as { id: string; title: string; type: string; path?: string; pages?: unknown[] }[]).map((p) => ({
    id: p.id,
    title: p.title,
    type: p.type,
    ...(p.path !== undefined ? { path: p.path } : {}),
    ...(p.pages?.length ? { pages: outline(p.pages) } : {}),
  }));
}

function readTools(ctx: Ctx, organizationId: string): Tool[] {
  return [
    tool({
      name: 'list_spaces',
      title: 'List spaces',
      description: 'List the spaces of the organization you can read, with your role in each (read, comment, edit, review, create, admin).',
      input: Type.Object({}, closed),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async () => {
        const { items } = await listOrganizationSpaces(ctx, organizationId, { limit: SPACES_SCANNED });
        const spaces = items.map(({ space, role }) => ({ id: space.id, title: space.title, role, canEdit: spacePermissions(role).edit, canMerge: spacePermissions(role).merge }));
        return { text: json(spaces), data: { spaces } };
      },
    }),
    tool({
      name: 'search',
      title: 'Search content',
      description: 'Search the pages of every space you can read. Answers the matching pages grouped by space, best first, with the passages that matched.',
      input: Type.Object({ query: Type.String({ minLength: 1, maxLength: 512, description: 'Words or a question' }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'Most pages to answer (10 by default)' })) }, closed),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async ({ query, limit }) => {
        const found = await searchOrganization(ctx, organizationId, query, { limit: limit ?? 10 });
        const results = found.items.flatMap((space) =>
          space.pages.map((p) => ({ spaceId: space.id, space: space.title, pageId: p.id, title: p.title, path: p.path, snippet: p.sections[0]?.body ?? p.description, url: p.urls.app })),
        );
        const text = results.length
          ? results.map((r, i) => `${i + 1}. ${r.title} (space "${r.space}" ${r.spaceId}, path ${r.path}, page ${r.pageId})\n   ${r.snippet.replace(/\s+/g, ' ').trim()}`).join('\n')
          : `No page matches "${query}".`;
        return { text, data: { results } };
      },
    }),
    tool({
      name: 'list_pages',
      title: 'List pages',
      description: "List the page tree of a space (or of a change request's content): ids, titles and paths.",
      input: Type.Object({ spaceId: SpaceId, changeRequest: Type.Optional(ChangeRequestId) }, closed),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async ({ spaceId, changeRequest }) => {
        const { pages } = await presentPages(ctx, await targetOf(ctx, spaceId, changeRequest), { metadata: false });
        const tree = outline(pages);
        return { text: json(tree), data: { pages: tree } };
      },
    }),
    tool({
      name: 'read_page',
      title: 'Read a page',
      description: "Read a page as markdown (its front matter first): from the space's current content, or from a change request's when `changeRequest` is given.",
      input: Type.Object({ spaceId: SpaceId, page: PageRef, changeRequest: Type.Optional(ChangeRequestId) }, closed),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async ({ spaceId, page, changeRequest }) => {
        const target = await targetOf(ctx, spaceId, changeRequest);
        const entry = await findPage(ctx, target, page);
        const read = await presentPage(ctx, target, entry, { metadata: false, format: 'markdown' });
        const markdown = (read.page as { markdown?: string }).markdown ?? '';
        return { text: markdown, data: { spaceId: target.space.id, pageId: entry.id, title: entry.title, markdown } };
      },
    }),
    tool({
      name: 'list_change_requests',
      title: 'List change requests',
      description: 'List the change requests of a space, or of every space you can read: open ones unless another status is asked for.',
      input: Type.Object(
        {
          spaceId: Type.Optional(SpaceId),
          status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('open'), Type.Literal('archived'), Type.Literal('merged')], { description: 'open by default' })),
        },
        closed,
      ),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async ({ spaceId, status }) => {
        const page = spaceId
          ? await listChangeRequests(ctx, spaceId, { limit: 100, status: status ?? 'open' })
          : await listOrganizationChangeRequests(ctx, organizationId, { limit: 100, statuses: [status ?? 'open'] });
        const items = (await presentChangeRequests(ctx, page.items)).map((cr) => ({ id: cr.id, number: cr.number, spaceId: cr.space, subject: cr.subject, status: cr.status, url: cr.urls.app }));
        return { text: items.length ? json(items) : 'No change request.', data: { changeRequests: items } };
      },
    }),
    tool({
      name: 'get_change_request',
      title: 'Read a change request',
      description: 'Read a change request: its subject, status, and the pages it changes. Read a changed page with read_page and `changeRequest`.',
      input: Type.Object({ spaceId: SpaceId, changeRequest: ChangeRequestId }, closed),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async ({ spaceId, changeRequest }) => {
        const { cr } = await loadChangeRequest(ctx, spaceId, changeRequest);
        const [presented] = await presentChangeRequests(ctx, [cr]);
        const { changes } = await changesOf(ctx, spaceId, cr.id);
        const data = { changeRequest: presented, changes };
        return { text: json(data), data };
      },
    }),
  ];
}

function writeTools(ctx: Ctx): Tool[] {
  return [
    tool({
      name: 'create_change_request',
      title: 'Open a change request',
      description: 'Open a change request in a space: a branch of its content where edits wait for review before being merged. Answers its id and number.',
      input: Type.Object({ spaceId: SpaceId, subject: Type.String({ minLength: 1, maxLength: 300, description: 'What the change is about' }) }, closed),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
      run: async ({ spaceId, subject }) => {
        const cr = await openChangeRequest(ctx, spaceId, { subject });
        const [presented] = await presentChangeRequests(ctx, [cr]);
        return { text: `Opened change request #${cr.number} (${cr.id}) in space ${cr.space_id}: ${presented!.urls.app}`, data: { changeRequest: presented } };
      },
    }),
    tool({
      name: 'edit_page',
      title: "Edit a page's markdown",
      description:
        "Replace the markdown of a page in an open change request (GitBook markdown; front matter and a first '# Title' line set the page's metadata and title). Read the page first with read_page and `changeRequest`, then send it whole, changed.",
      input: Type.Object({ spaceId: SpaceId, changeRequest: ChangeRequestId, page: PageRef, markdown: Type.String({ maxLength: 2_000_000, description: 'The whole new markdown of the page' }) }, closed),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: async ({ spaceId, changeRequest, page, markdown }) => {
        const entry = await findPage(ctx, await targetOf(ctx, spaceId, changeRequest), page);
        const { cr } = await editContent(ctx, spaceId, changeRequest, [{ operation: 'update_page', page: entry.id, document: { markdown } }]);
        return { text: `Updated "${entry.title}" (${entry.id}) in change request #${cr.number}.`, data: { changeRequest: cr.id, number: cr.number, pageId: entry.id, revision: cr.revision } };
      },
    }),
    tool({
      name: 'create_page',
      title: 'Add a page',
      description: 'Add a page, written in markdown, to an open change request: at the top of the space, or under a parent page.',
      input: Type.Object(
        {
          spaceId: SpaceId,
          changeRequest: ChangeRequestId,
          title: Type.String({ minLength: 1, maxLength: 500 }),
          markdown: Type.String({ maxLength: 2_000_000, description: 'The markdown of the page' }),
          parent: Type.Optional({ ...PageRef, description: 'The parent page: its id or path (the top of the space when absent)' }),
        },
        closed,
      ),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
      run: async ({ spaceId, changeRequest, title, markdown, parent }) => {
        const into = parent ? (await findPage(ctx, await targetOf(ctx, spaceId, changeRequest), parent)).id : undefined;
        const { cr, outcome } = await editContent(ctx, spaceId, changeRequest, [{ operation: 'insert_page', title, document: { markdown }, ...(into ? { into } : {}) }]);
        const created = outcome.pages.find((p) => p.kind === 'created');
        return { text: `Added "${title}"${created ? ` (${created.id})` : ''} in change request #${cr.number}.`, data: { changeRequest: cr.id, number: cr.number, ...(created ? { pageId: created.id } : {}) } };
      },
    }),
  ];
}

function mergeTool(ctx: Ctx): Tool {
  return tool({
    name: 'merge_change_request',
    title: 'Merge a change request',
    description: "Merge an open change request into its space's content (three-way; a conflict refuses the merge and names the pages). Needs the review role on the space and its merge rules met.",
    input: Type.Object({ spaceId: SpaceId, changeRequest: ChangeRequestId }, closed),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    run: async ({ spaceId, changeRequest }) => {
      const merged = await mergeChangeRequest(ctx, spaceId, changeRequest);
      return { text: `Merged: the space's content is now revision ${merged.revision}.`, data: merged as unknown as Record<string, unknown> };
    },
  });
}

/** POST (and the refused GET and DELETE) at `/v1/orgs/{organizationId}/mcp`, the caller authenticated by the API. */
export async function answerOrganizationMcp(ctx: Ctx, organizationId: string, req: FastifyRequest, reply: FastifyReply) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  let tools: Tool[] = [];
  if (req.method === 'POST') {
    // Which tools this caller could use anywhere: their roles on the spaces they can read.
    const { items } = await listOrganizationSpaces(ctx, organizationId, { limit: SPACES_SCANNED });
    const may = items.map(({ role }) => spacePermissions(role));
    tools = [...readTools(ctx, organizationId), ...(may.some((p) => p.edit) ? writeTools(ctx) : []), ...(may.some((p) => p.merge) ? [mergeTool(ctx)] : [])];
  }
  return answerMcp(req, reply, () =>
    mcpServer(
      { name: `folio-org-${organizationId}`, title: 'Folio organization', version: SERVER_VERSION },
      'The content of a Folio organization, as the token\'s user may read and change it. Find pages with search or list_spaces and list_pages, read them with read_page. To change content, open a change request (create_change_request), edit pages in it (edit_page, create_page), and leave it for review.',
      tools,
      req.log,
    ),
  );
}
