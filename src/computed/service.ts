import type { Ctx } from '../platform/context.ts';
import type { SpaceRow } from '../platform/db/schema.ts';
import { loadSpace } from '../spaces/access.ts';
import { planRevision, type PlannedPage } from '../openapi/computed.ts';
import { documentSource, revisionSource, type OpenAPIRevisionProps, type SourceInput } from './sources.ts';
import { integrationDocument, integrationRevision } from './integration-answers.ts';
import { translatedDocumentMarkdown, translatedRevision } from '../translations/computed.ts';
import { breather, documentPage, type ComputedPage, seededDocument, seededId, Slugs } from '../content/computed-pages.ts';
import { openAPIMarkdown, SpecLoader } from '../openapi/computed-pages.ts';
import type { GitBookDocument } from '../content/markdown/markdown.ts';

/**
 * `getComputedDocument` and `getComputedRevision`: content computed on request from a source,
 * never stored. `builtin:openapi` builds an API reference from a spec of the space's organization
 * (src/openapi/computed.ts); `builtin:translation` reads what a translation of the organization
 * produced (src/translations/computed.ts); `integration:<name>:<sourceId>` asks the integration
 * installed on the space (src/integrations/computed.ts, answers checked in computed-answers.ts).
 * Reading the space is all it takes, as for any content read; specs are seen as the caller may see
 * them, a translation's spaces are read with the caller's own rights.
 *
 * The `seed` makes every id deterministic: the same seed and input give the same page ids and
 * block keys, another seed other ones. A computed revision's page documents are computed with
 * the page's id as their seed, so `getComputedDocument` with a page's props and id as the seed
 * answers exactly that page's document.
 */

export interface ComputeInput {
  source: SourceInput;
  seed: string;
}

async function openAPIRevision(ctx: Ctx, space: SpaceRow, slug: string, props: OpenAPIRevisionProps, seed: string) {
  const specs = new SpecLoader(ctx, space);
  const { loaded, model } = await specs.model(slug);
  const breathe = breather();
  const build = async (planned: PlannedPage[], prefix: string): Promise<ComputedPage[]> => {
    const slugs = new Slugs();
    const out: ComputedPage[] = [];
    for (const p of planned) {
      await breathe();
      const id = seededId(seed, p.key);
      const pageSlug = slugs.take(p.slug);
      const path = prefix ? `${prefix}/${pageSlug}` : pageSlug;
      const document = await seededDocument(await openAPIMarkdown(specs, slug, p.props), id);
      out.push(documentPage(ctx, space, { id, title: p.title, slug: pageSlug, path, document, pages: await build(p.children, path) }));
    }
    return out;
  };
  const pages = await build(planRevision(model, props), '');
  // Only a public spec fetched from a URL has an address every reader may download it from.
  const url = loaded.spec.visibility === 'public' ? loaded.spec.source_url : null;
  if (props.downloadLink && url) {
    pages.push({ id: seededId(seed, 'download'), title: `Download the ${model.info.title} specification`, kind: 'link', type: 'link', target: { kind: 'url', url }, href: url });
  }
  return pages;
}

export async function computedDocument(ctx: Ctx, spaceId: string, input: ComputeInput): Promise<GitBookDocument> {
  const { space } = await loadSpace(ctx, spaceId);
  const seed = input.seed;
  const source = documentSource(input.source);
  if (source.kind === 'integration') return integrationDocument(ctx, space, source, seed);
  if (source.kind === 'translation') return seededDocument(await translatedDocumentMarkdown(ctx, space, source), seed);
  return seededDocument(await openAPIMarkdown(new SpecLoader(ctx, space), source.spec, source.props), seed);
}

export async function computedRevision(ctx: Ctx, spaceId: string, input: ComputeInput) {
  const { space } = await loadSpace(ctx, spaceId);
  const seed = input.seed;
  const source = revisionSource(input.source);
  if (source.kind === 'integration') return integrationRevision(ctx, space, source, seed);
  if (source.kind === 'translation') return translatedRevision(ctx, space, source.translation, seed);
  return { pages: await openAPIRevision(ctx, space, source.spec, source.props, seed), files: [], reusableContents: [] };
}
