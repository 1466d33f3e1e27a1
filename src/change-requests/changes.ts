import { ContentReader, type PageEntry } from '../content/model.ts';
import { loadRevision } from '../content/service.ts';
import type { Ctx } from '../platform/context.ts';
import { loadChangeRequest } from './service.ts';

/** What a change request changes compared with its base: page and file changes, and open conflicts. */
export async function changesOf(ctx: Ctx, spaceId: string, idOrNumber: string, limit = 100) {
  const { space, cr } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  const [base, head] = await Promise.all([
    loadRevision(ctx.db, space.id, cr.revision_merged_ancestor ?? cr.revision_initial),
    loadRevision(ctx.db, space.id, cr.revision),
  ]);
  const before = new ContentReader(ctx.db, base.root);
  const after = new ContentReader(ctx.db, head.root);
  const diff = await after.tree.diff(base.root, head.root);
  const changes: ({ type: string } & Record<string, unknown>)[] = [];
  const page = async (reader: ContentReader, p: PageEntry) => ({ id: p.id, type: p.type, title: p.title, path: await reader.path(p) });
  for (const [key, a, b] of diff) {
    if (key.startsWith('p:')) {
      const old = a as PageEntry | undefined;
      const now = b as PageEntry | undefined;
      if (!old && now) changes.push({ type: 'page_created', page: await page(after, now) });
      else if (old && !now) changes.push({ type: 'page_deleted', page: await page(before, old) });
      else if (old && now) {
        if (old.parent !== now.parent || old.pos !== now.pos) {
          const parent = async (reader: ContentReader, id: string | null) => {
            const p = id ? await reader.page(id) : undefined;
            return p ? await page(reader, p) : undefined;
          };
          const [from, to] = await Promise.all([parent(before, old.parent), parent(after, now.parent)]);
          changes.push({ type: 'page_moved', page: await page(after, now), parent: { ...(from ? { before: from } : {}), ...(to ? { after: to } : {}) } });
        }
        const attributes: Record<string, { before?: string; after?: string }> = {};
        for (const [field, attr] of [['title', 'title'], ['description', 'description'], ['slug', 'slug'], ['doc', 'document'], ['emoji', 'emoji']] as const) {
          if (old[field] !== now[field]) {
            attributes[attr] = {
              ...(old[field] !== undefined && old[field] !== null ? { before: String(old[field]) } : {}),
              ...(now[field] !== undefined && now[field] !== null ? { after: String(now[field]) } : {}),
            };
          }
        }
        if (Object.keys(attributes).length) changes.push({ type: 'page_edited', page: await page(after, now), attributes });
      }
    } else if (key.startsWith('f:')) {
      const f = (b ?? a) as { id: string; name: string; contentType: string; blob: string };
      const file = { id: f.id, name: f.name, contentType: f.contentType, downloadURL: ctx.urls.api(`/blobs/${f.blob}/${encodeURIComponent(f.name)}`) };
      changes.push({ type: !a ? 'file_created' : !b ? 'file_deleted' : 'file_edited', file });
    }
  }
  const conflicts = await Promise.all(
    cr.conflicts.map(async (id) => {
      const p = await after.page(id);
      return { page: id, title: p?.title ?? '', reason: 'conflict markers left by an update' };
    }),
  );
  return { changes: changes.slice(0, limit), ...(changes.length > limit ? { more: changes.length - limit } : {}), conflicts };
}

