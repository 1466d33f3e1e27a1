import { mergeLines } from '../content/merge-lines.ts';
import { documentToMarkdown, markdownToDocument } from '../content/markdown/markdown.ts';
import { readPageFile, roundTripPageFile } from './page-file.ts';

/**
 * A page file written again after its page changed, keeping every line the change did not touch
 * exactly as the repository had it.
 *
 * Folio writes markdown the way GitBook writes it today, but a repository also holds pages written
 * by hand, by older GitBook versions or by other tools (`-` bullets, `![](<img.png>)` images,
 * escapes GitBook no longer writes). Rewriting such a page from its document would turn a one-line
 * edit into a diff of the whole file. Instead, three versions are merged line by line:
 *
 * - base: what Folio writes for the page as the repository has it (the previous file, read and
 *   written again);
 * - ours: the previous file itself;
 * - theirs: what Folio writes for the page now.
 *
 * Where only the previous file differs from base, its lines are kept (a way of writing, not a
 * change); where the page changed, Folio's lines are written; where both differ, Folio's win. The
 * result is used only when it reads back as the same page as Folio's own text (it can differ where
 * a kept line depends on a rewritten one, such as a list's numbering or a fence): else Folio's
 * text is written whole. Work grows with the page and its changes (mergeLines).
 */
export function keepUnchangedLines(previous: string, written: string): string {
  if (previous === written) return previous;
  const base = roundTripPageFile(previous);
  if (base === written) return previous; // the page reads as it did: nothing to write
  if (base === previous) return written; // the file was Folio's own writing: nothing to keep
  const lines = (text: string) => text.split('\n');
  const merged = mergeLines(lines(base), lines(previous), lines(written), 'theirs').result.join('\n');
  return samePage(merged, written) ? merged : written;
}

/** Whether two page files read as the same page: title, front matter and document. */
function samePage(a: string, b: string): boolean {
  const x = readPageFile(a);
  const y = readPageFile(b);
  if (x.title !== y.title || JSON.stringify(x.metadata) !== JSON.stringify(y.metadata)) return false;
  return documentToMarkdown(markdownToDocument(x.body)) === documentToMarkdown(markdownToDocument(y.body));
}
