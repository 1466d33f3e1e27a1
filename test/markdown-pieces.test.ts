import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseMarkdown } from '../src/content/markdown/parse.ts';
import { splitTopLevel } from '../src/content/markdown/chunks.ts';
import { markdownToDocument, markdownToDocumentJson } from '../src/content/markdown/markdown.ts';

/**
 * Long pages are parsed in pieces (src/content/markdown/chunks.ts). Cutting at every place the splitter allows
 * (pieces of one character) must give exactly the document of a parse of the whole page: same
 * blocks, same keys, same heading depths.
 */

const whole = (markdown: string) => parseMarkdown(markdown, { pieceChars: Number.MAX_SAFE_INTEGER });
const cut = (markdown: string) => parseMarkdown(markdown, { pieceChars: 1 });

function assertSameParse(markdown: string) {
  const a = whole(markdown);
  const b = cut(markdown);
  assert.deepEqual(b.document, a.document);
  const depths = (p: ReturnType<typeof parseMarkdown>) => p.document.nodes.map((n) => p.headingDepth.get(n) ?? null);
  assert.deepEqual(depths(b), depths(a));
}

// Blocks that end at a blank line, and constructs that span blank lines or could be misread if cut.
const SNIPPETS = [
  '# Title one',
  '## Second level',
  '#### Deep heading',
  'Plain paragraph with *emphasis* and `code`.',
  'Setext heading\n==============',
  'A paragraph\nthat goes on\nover lines.',
  '- item one\n- item two\n\n  continued in the item\n\nafter the list',
  '1. first\n2. second\n\n   more of second',
  '> quoted\n>\n> still quoted',
  '    indented code\n\n    more indented code',
  '```js\n# not a heading\n\nconst x = 1;\n\nAlso code\n```',
  '~~~\ntilde fence\n\n## inside\n~~~',
  '$$\nx^2\n\ny^2\n$$',
  '{% hint style="info" %}\nInside a hint.\n\nSecond paragraph.\n{% endhint %}',
  '{% tabs %}\n{% tab title="One" %}\n# Heading in a tab\n\nText in a tab.\n{% endtab %}\n\n{% tab title="Two" %}\nOther text.\n{% endtab %}\n{% endtabs %}',
  '<details>\n\n<summary>More</summary>\n\nHidden text.\n\n## Heading inside\n\n</details>',
  '<!-- a comment\n\nWith a blank line\n-->',
  '| a | b |\n| - | - |\n| 1 | 2 |',
  '<table><thead><tr><th>A</th></tr></thead>\n\n<tbody><tr><td>cell</td></tr></tbody></table>',
  'Text with a footnote[^1].\n\n[^1]: The footnote.',
  'A [reference link][ref].\n\n[ref]: https://example.com',
  '***',
  '{% embed url="https://example.com/video" %}',
  'Closing paragraph.',
];

test('cut and whole parses agree on generated pages', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...SNIPPETS), { minLength: 2, maxLength: 25 }), (parts) => {
      assertSameParse(parts.join('\n\n') + '\n');
    }),
    { numRuns: 300 },
  );
});

test('cut and whole parses agree on the hand-written fixtures, alone and repeated', () => {
  const dir = new URL('./fixtures/content-format/', import.meta.url);
  for (const name of readdirSync(dir)) {
    const text = readFileSync(new URL(name, dir), 'utf8');
    assertSameParse(text);
    assertSameParse([text, text.replace(/^---[\s\S]*?---\n/, ''), '# After\n\nEnd.\n'].join('\n\n'));
  }
});

test('long pages are cut, and only at the left margin after a blank line', () => {
  const page = Array.from({ length: 200 }, (_, i) => `## Section ${i}\n\nParagraph ${i}.\n\n- a\n- b\n`).join('\n');
  const pieces = splitTopLevel(page, 1000);
  assert.ok(pieces.length > 5);
  assert.equal(pieces.join(''), page);
  for (const piece of pieces.slice(1)) assert.match(piece, /^(#|[A-Za-z])/);
  // References across the page keep it whole.
  assert.equal(splitTopLevel(`${page}\n[x]: https://example.com\n`, 1000).length, 1);
});

test('a long page serialized piece by piece is the JSON of its whole document', () => {
  const page = Array.from({ length: 3000 }, (_, i) => SNIPPETS[i % SNIPPETS.length]!.replace(/\[\^1\]|\[ref\]/g, '')).join('\n\n');
  assert.ok(splitTopLevel(page, 32 * 1024).length > 3);
  assert.equal(markdownToDocumentJson(page), JSON.stringify(markdownToDocument(page)));
});
