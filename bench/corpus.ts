import { execFileSync } from 'node:child_process';

/**
 * Markdown pages of a documentation corpus read from a git mirror (under /work/.mirror, brought
 * there by the project's `fetch`): the search and Ask quality benchmarks import the same pages.
 * Nothing of a corpus is stored in this repository.
 */

export type Page = { path: string; title: string; description: string; markdown: string; headings: string[] };


export const git = (gitDir: string, args: string[], input?: string) => execFileSync('git', ['--git-dir', gitDir, ...args], { input, maxBuffer: 1024 * 1024 * 1024 });

/** Reads many blobs in one `git cat-file --batch`. */
export function readBlobs(gitDir: string, ref: string, paths: string[]): string[] {
  const out = git(gitDir, ['cat-file', '--batch'], paths.map((p) => `${ref}:${p}`).join('\n') + '\n');
  const texts: string[] = [];
  let at = 0;
  for (let i = 0; i < paths.length; i++) {
    const eol = out.indexOf(10, at);
    const header = out.subarray(at, eol).toString();
    const size = Number(header.split(' ')[2]);
    if (!Number.isFinite(size) || header.endsWith('missing')) {
      texts.push('');
      at = eol + 1;
      continue;
    }
    texts.push(out.subarray(eol + 1, eol + 1 + size).toString('utf8'));
    at = eol + 1 + size + 1;
  }
  return texts;
}

/** Heading text as a reader sees it: no markup, links, anchors, emoji or HTML. */
export function plain(text: string): string {
  return text
    .replace(/<[^>]+>/g, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`~]/g, '')
    .replace(/\p{Extended_Pictographic}/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function pageOf(path: string, text: string): Page | undefined {
  let markdown = text.replace(/\r\n/g, '\n');
  let description = '';
  const front = /^---\n([\s\S]*?)\n---\n/.exec(markdown);
  if (front) {
    description = /^description:\s*(.+)$/m.exec(front[1]!)?.[1]?.replace(/^['"]|['"]$/g, '').trim() ?? '';
    markdown = markdown.slice(front[0].length);
  }
  const h1 = /^# (.+)$/m.exec(markdown);
  if (!h1) return undefined;
  const title = plain(h1[1]!);
  if (!title) return undefined;
  // GitBook keeps the title out of the page's document.
  markdown = markdown.slice(0, h1.index) + markdown.slice(h1.index + h1[0].length);
  const headings: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{2,3} (.+)$/.exec(line);
    if (m) {
      const heading = plain(m[1]!);
      if (heading) headings.push(heading);
    }
  }
  return { path, title, description, markdown, headings };
}

