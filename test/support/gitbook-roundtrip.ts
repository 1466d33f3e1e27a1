import { posix } from 'node:path';
import { diffArrays } from 'diff';
import { keepUnchangedLines } from '../../src/git/keep-lines.ts';
import { type LinkMapping, roundTripIncludeFile, roundTripPageFile } from '../../src/git/page-file.ts';

/**
 * The GitBook corpus check shared by test/gitbook-roundtrip.test.ts and bench/gitbook-roundtrip.ts:
 * a repository's markdown file after an edit through the document API, and what differs.
 */

/** The file after a round trip; null for files that are not page content (SUMMARY.md). */
export function roundTripRepositoryFile(path: string, text: string): string | null {
  const name = posix.basename(path);
  // SUMMARY.md is the table of contents; files under .gitbook/assets are uploads, not pages.
  if (/^summary\.md$/i.test(name) || /(?:^|\/)\.gitbook\/assets\//.test(path)) return null;
  const links = placeholderLinks();
  const include = /(?:^|\/)\.gitbook\/includes\/([^/]+)\.md$/.exec(path);
  if (include) return roundTripIncludeFile(text, include[1]!, links);
  return roundTripPageFile(text, links);
}

/**
 * Relative links become page references (`.md` targets and folders) or file references (anything
 * else), as a git sync import makes them, and come back as the very text they were: what is measured
 * is the content conversion, not how git sync spells paths.
 */
function placeholderLinks(): LinkMapping {
  const back = new Map<string, string>();
  const ids = new Map<string, string>();
  return {
    inward(target) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('/') || target.startsWith('//')) return undefined;
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      // Uploads under .gitbook/assets are files whatever their extension (a `.md` one too), as git sync imports them.
      const page = (/\.md$/i.test(path) || path.endsWith('/')) && !/(?:^|\/)\.gitbook\/assets\//.test(path);
      const id = ids.get(path) ?? `${page ? 'p' : 'f'}${back.size}`;
      ids.set(path, id);
      back.set(id, path);
      return page ? `/pages/${id}${anchor !== undefined ? `#${anchor}` : ''}` : `/files/${id}`;
    },
    outward(target) {
      const m = /^\/(?:pages|files)\/([^/#?]+)(#.*)?$/.exec(target);
      const path = m ? back.get(m[1]!) : undefined;
      return path === undefined ? undefined : `${path}${m![2] ?? ''}`;
    },
  };
}

/** Trailing whitespace of lines and of the file does not count. */
export function normalizeForComparison(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/[ \t]+$/gm, '').replace(/\n*$/, '\n');
}

/** Names a changed stretch of lines: what kind of rewriting made the difference. */
function kindOf(removed: string[], added: string[], inFrontMatter: boolean): string {
  const a = removed.join('\n');
  const b = added.join('\n');
  if (inFrontMatter) return 'front matter';
  if (a.replace(/\n/g, '') === b.replace(/\n/g, '')) return 'line breaks / blank lines';
  if (a.replace(/\s+/g, '') === b.replace(/\s+/g, '')) return 'spacing or indentation';
  if (a.replace(/\\/g, '') === b.replace(/\\/g, '')) return 'backslash escapes';
  if (a.replace(/^(\s*)[*+-](?=\s)/gm, '$1-') === b.replace(/^(\s*)[*+-](?=\s)/gm, '$1-')) return 'bullet marker';
  if (a.replace(/^(\s*\d+)[.)]/gm, '$1.') === b.replace(/^(\s*\d+)[.)]/gm, '$1.') || /^\s*\d+[.)]\s/m.test(a)) return 'ordered list numbering';
  if (a.replace(/[*_]/g, '') === b.replace(/[*_]/g, '')) return 'emphasis markers';
  if (a.replace(/&#x[0-9a-f]+;|&\w+;/gi, '') === b.replace(/&#x[0-9a-f]+;|&\w+;/gi, '')) return 'character references';
  if (/^#{1,6}\s/m.test(a) || /^#{1,6}\s/m.test(b)) return 'heading';
  if (/^\s*(```|~~~)/m.test(a) || /^\s*(```|~~~)/m.test(b) || /<pre|<code/.test(a)) return 'code block';
  if (/\{%/.test(a) || /\{%/.test(b)) return 'GitBook {% %} tag';
  if (/^\s*\|/m.test(a) || /^\s*\|/m.test(b)) return 'pipe table';
  if (/<table|<t[dhr]\b/.test(a) || /<table|<t[dhr]\b/.test(b)) return 'HTML table';
  if (/<figure|<img|<div/.test(a) || /<figure|<img|<div/.test(b)) return 'image / figure';
  if (/^\s*>/m.test(a)) return 'blockquote';
  if (/^\s*([*+-]|\d+[.)])\s/m.test(a)) return 'list content';
  if (/</.test(a)) return 'inline HTML';
  if (/\[[^\]]*\]\(/.test(a) || /\[[^\]]*\]\(/.test(b)) return 'link';
  return 'other text';
}

export interface Comparison {
  identical: boolean;
  /** Kind of difference → an example (`original ⟶ written`, first lines). */
  kinds: Map<string, string>;
}

export function comparePageFiles(original: string, written: string): Comparison {
  const a = normalizeForComparison(original).split('\n');
  const b = normalizeForComparison(written).split('\n');
  const kinds = new Map<string, string>();
  if (a.join('\n') === b.join('\n')) return { identical: true, kinds };
  const frontMatterEnd = a[0] === '---' ? a.indexOf('---', 1) : -1;
  let line = 0;
  const parts = diffArrays(a, b);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!part.added && !part.removed) {
      line += part.value.length;
      continue;
    }
    const removed = part.removed ? part.value : [];
    const next = parts[i + 1];
    const added = part.removed && next?.added ? next.value : part.added ? part.value : [];
    if (part.removed && next?.added) i++;
    const kind = kindOf(removed, added, line <= frontMatterEnd);
    if (!kinds.has(kind)) kinds.set(kind, `${JSON.stringify(removed.slice(0, 2).join('⏎'))} ⟶ ${JSON.stringify(added.slice(0, 2).join('⏎'))}`);
    line += removed.length;
  }
  return { identical: false, kinds };
}

/**
 * Two edits of a page as a person makes them (a paragraph added at the end; a word added to the
 * first line of prose that has " the "), exported as git sync does: written whole by Folio's writer,
 * and with the lines the edit did not touch kept (src/git/keep-lines.ts). Each answers how many
 * lines of the original file the export removed or rewrote: the edit itself accounts for none
 * (the added paragraph) or one (the edited line). Null when the file is not a page or the edit does
 * not apply.
 */
export function editedExports(path: string, text: string): { edit: 'append' | 'word'; whole: number; kept: number }[] | null {
  if (/^summary\.md$/i.test(posix.basename(path)) || /(?:^|\/)\.gitbook\//.test(path)) return null;
  const out: { edit: 'append' | 'word'; whole: number; kept: number }[] = [];
  const lines = text.split('\n');
  const prose = lines.findIndex((line, i) => i > 0 && / the /.test(line) && /^[A-Za-z]/.test(line));
  const edits: ['append' | 'word', string, number][] = [['append', `${text.replace(/\n*$/, '')}\n\nAn edit made by the benchmark.\n`, 0]];
  if (prose > 0) edits.push(['word', lines.map((line, i) => (i === prose ? line.replace(' the ', ' the very ') : line)).join('\n'), 1]);
  for (const [edit, changed, own] of edits) {
    const written = roundTripRepositoryFile(path, changed);
    if (written === null) return null;
    out.push({ edit, whole: Math.max(0, rewrittenLines(text, written) - own), kept: Math.max(0, rewrittenLines(text, keepUnchangedLines(text, written)) - own) });
  }
  return out;
}

/** Lines of `original` that `written` removed or changed (trailing whitespace aside). */
function rewrittenLines(original: string, written: string): number {
  const parts = diffArrays(normalizeForComparison(original).split('\n'), normalizeForComparison(written).split('\n'));
  return parts.reduce((n, part) => n + (part.removed ? part.count ?? part.value.length : 0), 0);
}
