import type { Ctx } from '../platform/context.ts';
import type { SpaceRow } from '../platform/db/schema.ts';
import { HttpError } from '../platform/errors.ts';
import { documentInputToMarkdown } from '../content/convert.ts';
import { loadSpec, specMembership, type LoadedSpec } from './blocks.ts';
import { apiModel, openAPIDocument, type ApiModel, type OpenAPIDocumentProps } from './computed.ts';

/** Specs of the space's organization loaded once per request, as the caller may see them. */
export class SpecLoader {
  private readonly cache = new Map<string, Promise<{ loaded: LoadedSpec; model: ApiModel }>>();

  constructor(
    private readonly ctx: Ctx,
    private readonly space: Pick<SpaceRow, 'organization_id'>,
  ) {}

  model(slug: string): Promise<{ loaded: LoadedSpec; model: ApiModel }> {
    let entry = this.cache.get(slug);
    if (!entry) {
      entry = (async () => {
        const { db, blobs, user } = this.ctx;
        const loaded = await loadSpec(db, blobs, this.space.organization_id, await specMembership(db, this.space.organization_id, user.id), { slug });
        if (!loaded) throw new HttpError(404, `source.dependencies.spec: no OpenAPI spec with the slug "${slug}" that you can see in this organization`);
        return { loaded, model: apiModel(loaded) };
      })();
      this.cache.set(slug, entry);
    }
    return entry;
  }
}

/** An OpenAPI document as markdown: built from blocks, written as any page is written. */
export async function openAPIMarkdown(specs: SpecLoader, slug: string, props: OpenAPIDocumentProps): Promise<string> {
  const { model } = await specs.model(slug);
  return documentInputToMarkdown(openAPIDocument(model, props), 'the computed document');
}

