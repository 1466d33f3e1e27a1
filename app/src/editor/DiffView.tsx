/**
 * A page's change, rendered: the page read-only, with the blocks a change request added and
 * removed marked as such (and named for assistive technology), unchanged runs folded to their
 * first and last block. Content goes through the editor's read-only view: never raw JSON, never
 * interpreted as HTML.
 */
import { useMemo, useState } from 'react';
import type { JSONDocument } from './convert.ts';
import { diffBlocks, type DiffPart } from './diff.ts';
import { PageEditor } from './PageEditor.tsx';

const FOLD_OVER = 4;

function docOf(template: JSONDocument | null, blocks: DiffPart['blocks']): JSONDocument {
  return { ...(template ?? { object: 'document', data: {} }), nodes: blocks } as JSONDocument;
}

export function DiffView({ before, after, fileURL }: { before: JSONDocument | null; after: JSONDocument | null; fileURL?: (fileId: string) => string | undefined }) {
  const parts = useMemo(() => diffBlocks(before?.nodes ?? [], after?.nodes ?? []), [before, after]);
  const template = after ?? before;
  if (parts.length === 0) return <p className="muted">The page is empty.</p>;
  if (parts.every((p) => p.kind === 'same')) return <p className="muted">The content is unchanged (its title or place changed).</p>;
  return (
    <div className="diff">
      {parts.map((part, index) =>
        part.kind === 'same' ? (
          <Unchanged key={index} template={template} blocks={part.blocks} fileURL={fileURL} />
        ) : (
          <section key={index} className={`diff-${part.kind}`} aria-label={part.kind === 'added' ? 'Added' : 'Removed'}>
            <span className="diff-mark" aria-hidden="true">
              {part.kind === 'added' ? '+' : '−'}
            </span>
            <PageEditor document={docOf(template, part.blocks)} editable={false} fileURL={fileURL} label={part.kind === 'added' ? 'Added content' : 'Removed content'} />
          </section>
        ),
      )}
    </div>
  );
}

function Unchanged({ template, blocks, fileURL }: { template: JSONDocument | null; blocks: DiffPart['blocks']; fileURL?: (fileId: string) => string | undefined }) {
  const [open, setOpen] = useState(false);
  const folded = !open && blocks.length > FOLD_OVER;
  const shown = folded ? [blocks[0]!, blocks[blocks.length - 1]!] : blocks;
  return (
    <div className="diff-same">
      {folded ? (
        <>
          <PageEditor document={docOf(template, shown.slice(0, 1))} editable={false} fileURL={fileURL} label="Unchanged content" />
          <button type="button" className="diff-fold" onClick={() => setOpen(true)}>
            Show {blocks.length - 2} unchanged blocks
          </button>
          <PageEditor document={docOf(template, shown.slice(1))} editable={false} fileURL={fileURL} label="Unchanged content" />
        </>
      ) : (
        <PageEditor document={docOf(template, blocks)} editable={false} fileURL={fileURL} label="Unchanged content" />
      )}
    </div>
  );
}
