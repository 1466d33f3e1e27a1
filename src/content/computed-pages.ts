import { createHash } from 'node:crypto';
import type { Ctx } from '../platform/context.ts';
import type { SpaceRow } from '../platform/db/schema.ts';
import { markdownToDocumentForRead } from './convert.ts';
import type { GitBookDocument } from './markdown/markdown.ts';
import { slugify } from './model.ts';
import { DEFAULT_LAYOUT } from './presenter.ts';

/** What computed pages and documents share, whatever computes them: seeded ids and keys, slugs, the page shape. */

/** A page of a computed revision: an official `RevisionPage` (document, group, link or computed page). */
export type ComputedPage = { id: string; title: string; type: string } & Record<string, unknown>;

/** A file of a computed revision (the official `RevisionFile`). */
export interface ComputedFile {
  id: string;
  name: string;
  contentType: string;
  downloadURL: string;
  size: number;
  dimensions?: { width: number; height: number };
}

/** A deterministic id (base62, 20 characters, as Folio's ids) from a seed and what it names. */
export function seededId(seed: string, key: string): string {
  const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const digest = createHash('sha256').update(`${seed}\u0000${key}`).digest();
  let out = '';
  for (let i = 0; i < 20; i++) out += ALPHABET[digest[i]! % 62];
  return out;
}

/** A document with block keys from the seed (its text read as any stored page is). */
export function seededDocument(markdown: string, seed: string): Promise<GitBookDocument> {
  return markdownToDocumentForRead(markdown, { keySeed: seed });
}

/**
 * Lets other requests run every `n` calls: small documents convert synchronously, so a revision
 * of hundreds of pages would otherwise hold the event loop for its whole computation.
 */
export function breather(n = 25): () => Promise<void> {
  let calls = 0;
  return async () => {
    if (++calls % n === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  };
}

/** Slugs unique among siblings: a repeated one gets `-2`, `-3`… (as pages of a space do). */
export class Slugs {
  private readonly taken = new Set<string>();

  take(wanted: string): string {
    const base = slugify(wanted);
    let slug = base;
    for (let n = 2; this.taken.has(slug); n++) slug = `${base.slice(0, 95)}-${n}`;
    this.taken.add(slug);
    return slug;
  }
}

/** The official `RevisionPageDocument` of a computed page: its document inline, no stored document id. */
export function documentPage(
  ctx: Ctx,
  space: Pick<SpaceRow, 'id'>,
  page: { id: string; title: string; slug: string; path: string; document: GitBookDocument; pages: ComputedPage[]; extra?: Record<string, unknown> },
): ComputedPage {
  return {
    id: page.id,
    title: page.title,
    kind: 'sheet' as const,
    type: 'document' as const,
    // The page is not in the space: its address is where it would be, were it imported there.
    urls: { app: ctx.urls.pageApp(space, page.path) },
    slug: page.slug,
    path: page.path,
    pages: page.pages,
    layout: { ...DEFAULT_LAYOUT },
    tags: [],
    document: page.document,
    hidden: false,
    noIndex: false,
    noRobotsIndex: false,
    ...(page.extra ?? {}),
  };
}
