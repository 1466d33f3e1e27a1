/**
 * Markdown ⇄ GitBook document conversion. Documents are checked against the official `JSONDocument`
 * schema from @gitbook/api, structures are asserted node by node, and the round trip
 * markdown → document → markdown → document is checked on a rich page and on generated pages.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { officialSchema } from './support/official-schema.ts';
import {
  type GitBookDocument,
  documentToMarkdown,
  markdownLinks,
  markdownSections,
  markdownToDocument,
  plainText,
} from '../src/content/markdown/markdown.ts';

// The project's check against the official schema (with its documented workarounds). A second Ajv
// over the same spec object here broke when official-schema.ts, loaded into the same process by
// another test file, adjusted that object after this one had compiled against it.
const validateJSONDocument = officialSchema('JSONDocument');

function assertOfficial(doc: unknown): void {
  assert.ok(validateJSONDocument(doc), `not a valid JSONDocument:\n  ${validateJSONDocument.errors().slice(0, 3000)}`);
}

/** Any node of the document tree, read loosely so tests can walk it. */
type Node = {
  object: string;
  type?: string;
  key?: string;
  data?: any;
  nodes?: Node[];
  leaves?: { text: string; marks: { type: string }[] }[];
  fragments?: Node[];
  fragment?: string;
  isVoid?: boolean;
};

const top = (doc: GitBookDocument) => doc.nodes as unknown as Node[];

function walk(nodes: Node[] | undefined, visit: (node: Node) => void): void {
  for (const node of nodes ?? []) {
    visit(node);
    walk(node.nodes, visit);
    for (const fragment of node.fragments ?? []) {
      visit(fragment);
      walk(fragment.nodes, visit);
    }
  }
}

function all(doc: GitBookDocument, predicate: (node: Node) => boolean): Node[] {
  const found: Node[] = [];
  walk(top(doc), (n) => predicate(n) && found.push(n));
  return found;
}

function first(doc: GitBookDocument, predicate: (node: Node) => boolean): Node {
  const found = all(doc, predicate)[0];
  assert.ok(found, 'no such node');
  return found;
}

/** Text of a node, inline voids shown as `{type}`. */
function text(node: Node | undefined): string {
  if (!node) return '';
  if (node.object === 'text') return node.leaves!.map((l) => l.text).join('');
  if (node.object === 'inline' && node.isVoid) return `{${node.type}}`;
  return (node.nodes ?? []).map(text).join('');
}

/** Leaves of a block as `[text, marks]` pairs, inlines as `{type}`. */
function leaves(block: Node): [string, string[]][] {
  return (block.nodes ?? []).flatMap((n): [string, string[]][] =>
    n.object === 'text' ? n.leaves!.map((l): [string, string[]] => [l.text, l.marks.map((m) => m.type)]) : [[`{${n.type}}`, []]],
  );
}

function withoutKeys(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (k, v) => (k === 'key' ? undefined : v)));
}

const RICH = `# Guide

Intro with **bold**, *italic*, ~~gone~~, \`code\`, ***both*** and H<sub>2</sub>O, x<sup>2</sup>, <kbd>Ctrl</kbd>.
See [the site](https://example.com), [a page](/pages/pg_1), [a section](/pages/pg_1#setup), [here](#local) and [rel](./other.md).
Hello <code class="expression">space.vars.user_name</code>, inline math $$a_1 * b_2 = \\{c\\}$$ too.

## Lists

- one
- two
  - nested **deep**
- three

3. third
4. fourth

- [x] done
- [ ] todo

{% hint style="warning" %}
Be **careful**.

- in a hint
{% endhint %}

### Code

\`\`\`js
const x = 1;

console.log(x);
\`\`\`

{% code title="run.sh" lineNumbers="true" %}
\`\`\`bash
echo hi
\`\`\`
{% endcode %}

> Quoted
> > nested

| Name | Count | Note |
| :--- | ----: | :--: |
| a **b** | 1 | [l](https://l.example) |
| \`c\` \\| d | 2 | |

![Alt one](https://img.example/one.png "First caption") ![](https://img.example/two.png)

Text with ![inline](https://img.example/three.png) image.

$$
\\frac{a}{b} * c_1 \\\\
d_2
$$

$$x^2$$

---

#### Deep heading <a href="#custom-id" id="custom-id"></a>

<figure><img src="https://img.example/fig.png" alt="Figure"><figcaption><p>A figure</p></figcaption></figure>

{% embed url="https://www.youtube.com/watch?v=1" %}

www.example.org and <https://auto.example>
`;

describe('markdownToDocument', () => {
  const doc = markdownToDocument(RICH);
  const blocks = top(doc);

  test('produces a document the official JSONDocument schema accepts', () => {
    assert.equal(doc.object, 'document');
    assert.equal(doc.data.schemaVersion, 1);
    assertOfficial(doc);
    // The validator is not vacuous: a table without its fragments is refused.
    const broken = structuredClone(doc) as unknown as { nodes: Node[] };
    delete broken.nodes.find((n) => n.type === 'table')!.fragments;
    assert.equal(validateJSONDocument(broken), false);
  });

  test('every block kind and mark of the rich page is there', () => {
    const types = new Set(all(doc, () => true).map((n) => n.type));
    for (const type of [
      'heading-1', 'heading-2', 'heading-3', 'paragraph', 'list-unordered', 'list-ordered', 'list-tasks', 'list-item',
      'hint', 'code', 'code-line', 'blockquote', 'table', 'images', 'image', 'inline-image', 'math', 'inline-math',
      'divider', 'link', 'expression', 'embed',
    ]) {
      assert.ok(types.has(type), `missing ${type}`);
    }
    const marks = new Set(all(doc, (n) => n.object === 'text').flatMap((n) => n.leaves!.flatMap((l) => l.marks.map((m) => m.type))));
    assert.deepEqual([...marks].sort(), ['bold', 'code', 'italic', 'keyboard', 'strikethrough', 'subscript', 'superscript']);
  });

  test('headings as GitBook writes them: `##` heading-1, `###` heading-2, `####` heading-3; a body `#` is heading-1; anchors kept in data.id', () => {
    assert.deepEqual([blocks[0]!.type, text(blocks[0])], ['heading-1', 'Guide']);
    assert.deepEqual(blocks[0]!.data, {});
    const headings = all(doc, (n) => n.type?.startsWith('heading-') ?? false).map((n) => [n.type, text(n), n.data]);
    assert.deepEqual(headings, [
      ['heading-1', 'Guide', {}],
      ['heading-1', 'Lists', {}],
      ['heading-2', 'Code', {}],
      ['heading-3', 'Deep heading', { id: 'custom-id' }],
    ]);
  });

  test('heading levels both ways: GitBook pages keep their `##`…`####`, deeper levels and a body `#` settle on a level that round-trips', () => {
    const types = (markdown: string) => markdownToDocument(markdown).nodes.map((n) => n.type);
    assert.deepEqual(types('# A\n\n## B\n\n### C\n\n#### D\n\n##### E\n\n###### F'), [
      'heading-1', 'heading-1', 'heading-2', 'heading-3', 'heading-3', 'heading-3',
    ]);
    // Aligned headings are HTML, one level down from the block as well (`<h2>` is heading-1).
    assert.deepEqual(types('<h2 align="center">A</h2>\n\n<h3 align="center">B</h3>\n\n<h4 align="right">C</h4>'), ['heading-1', 'heading-2', 'heading-3']);
    const gitbook = '## One\n\n### Two\n\n#### Three <a href="#x" id="x"></a>\n\n<h2 align="center">Centered</h2>\n';
    assert.equal(documentToMarkdown(markdownToDocument(gitbook)), gitbook);
    // What is not GitBook's own form is rewritten once, then stays.
    const once = documentToMarkdown(markdownToDocument('# Body title\n\n##### Five\n'));
    assert.equal(once, '## Body title\n\n#### Five\n');
    assert.equal(documentToMarkdown(markdownToDocument(once)), once);
  });

  test('marks become leaves; adjacent text shares one text node', () => {
    const intro = blocks[1]!;
    assert.equal(intro.type, 'paragraph');
    assert.deepEqual(leaves(intro).slice(0, 16), [
      ['Intro with ', []],
      ['bold', ['bold']],
      [', ', []],
      ['italic', ['italic']],
      [', ', []],
      ['gone', ['strikethrough']],
      [', ', []],
      ['code', ['code']],
      [', ', []],
      ['both', ['bold', 'italic']],
      [' and H', []],
      ['2', ['subscript']],
      ['O, x', []],
      ['2', ['superscript']],
      [', ', []],
      ['Ctrl', ['keyboard']],
    ]);
    assert.equal(intro.nodes![0]!.object, 'text');
    assert.equal(intro.nodes![1]!.type, 'link', 'the marked runs before the first link are one text node');
  });

  test('links: external URLs, page and anchor references, relative paths and autolinks', () => {
    // A bare `www.…` (or `https://…`, `name@host`) stays text, as GitBook reads it; `<https://…>` is a link.
    assert.ok(all(doc, (n) => n.type === 'paragraph').some((p) => text(p).startsWith('www.example.org and')));
    const links = all(doc, (n) => n.type === 'link').map((n) => [text(n), n.data.ref]);
    assert.deepEqual(links, [
      ['the site', { kind: 'url', url: 'https://example.com' }],
      ['a page', { kind: 'page', page: 'pg_1' }],
      ['a section', { kind: 'anchor', anchor: 'setup', page: 'pg_1' }],
      ['here', { kind: 'anchor', anchor: 'local' }],
      ['rel', { kind: 'url', url: './other.md' }],
      ['l', { kind: 'url', url: 'https://l.example' }],
      ['https://auto.example', { kind: 'url', url: 'https://auto.example' }],
    ]);
  });

  test('expressions stay evaluable; math keeps its TeX verbatim', () => {
    assert.deepEqual(first(doc, (n) => n.type === 'expression').data, { expression: 'space.vars.user_name' });
    assert.deepEqual(first(doc, (n) => n.type === 'inline-math').data, { formula: 'a_1 * b_2 = \\{c\\}' });
    const maths = blocks.filter((n) => n.type === 'math').map((n) => n.data.formula);
    assert.deepEqual(maths, ['\\frac{a}{b} * c_1 \\\\\nd_2', 'x^2']);
  });

  test('lists: nesting, ordered start, tasks with their checked state', () => {
    const [unordered, ordered, tasks] = blocks.filter((n) => n.type?.startsWith('list-'));
    assert.equal(unordered!.type, 'list-unordered');
    assert.deepEqual(unordered!.nodes!.map((item) => [item.type, text(item.nodes![0])]), [
      ['list-item', 'one'],
      ['list-item', 'two'],
      ['list-item', 'three'],
    ]);
    const nested = unordered!.nodes![1]!.nodes![1]!;
    assert.deepEqual([nested.type, text(nested)], ['list-unordered', 'nested deep']);
    assert.deepEqual([ordered!.type, ordered!.data, ordered!.nodes!.length], ['list-ordered', { start: 3 }, 2]);
    assert.deepEqual([tasks!.type, tasks!.nodes!.map((item) => [item.data.checked, text(item)])], [
      'list-tasks',
      [
        [true, 'done'],
        [false, 'todo'],
      ],
    ]);
  });

  test('code: syntax, one code-line per line (blank ones too), {% code %} attributes', () => {
    const [js, bash] = blocks.filter((n) => n.type === 'code');
    assert.deepEqual(js!.data, { syntax: 'js' });
    assert.deepEqual(js!.nodes!.map((line) => [line.type, text(line)]), [
      ['code-line', 'const x = 1;'],
      ['code-line', ''],
      ['code-line', 'console.log(x);'],
    ]);
    assert.deepEqual(bash!.data, { syntax: 'bash', title: 'run.sh', lineNumbers: true });
  });

  test('hints: style and content; unknown styles read as info; an unclosed tag stays text', () => {
    const hint = blocks.find((n) => n.type === 'hint')!;
    assert.deepEqual(hint.data, { style: 'warning' });
    assert.deepEqual(hint.nodes!.map((n) => [n.type, text(n)]), [
      ['paragraph', 'Be careful.'],
      ['list-unordered', 'in a hint'],
    ]);
    const odd = top(markdownToDocument('{% hint style="tip" %}\nx\n{% endhint %}'));
    assert.deepEqual([odd[0]!.type, odd[0]!.data], ['hint', { style: 'info' }]);
    const unclosed = top(markdownToDocument('{% hint style="danger" %}\nx'));
    assert.deepEqual(unclosed.map((n) => [n.type, text(n)]), [
      ['paragraph', '{% hint style="danger" %}'],
      ['paragraph', 'x'],
    ]);
  });

  test('tables: column definitions with alignment, ordered records, rich text cells in fragments', () => {
    const table = blocks.find((n) => n.type === 'table')!;
    const { view, definition, records } = table.data;
    assert.equal(table.isVoid, true);
    assert.equal(view.type, 'grid');
    assert.equal(view.hideHeader, false);
    assert.deepEqual(
      view.columns.map((c: string) => [definition[c].title, definition[c].type, definition[c].textAlignment]),
      [
        ['Name', 'text', 'left'],
        ['Count', 'text', 'right'],
        ['Note', 'text', 'center'],
      ],
    );
    const rows = Object.values(records as Record<string, { orderIndex: string; values: Record<string, string> }>).sort((a, b) =>
      a.orderIndex < b.orderIndex ? -1 : 1,
    );
    const cell = (row: number, column: number) => {
      const fragment = table.fragments!.find((f) => f.fragment === rows[row]!.values[view.columns[column]]);
      assert.ok(fragment, 'every text value names a fragment');
      assert.equal(fragment.nodes![0]!.type, 'paragraph');
      return fragment.nodes![0]!;
    };
    assert.deepEqual(leaves(cell(0, 0)), [
      ['a ', []],
      ['b', ['bold']],
    ]);
    assert.deepEqual(leaves(cell(1, 0)), [
      ['c', ['code']],
      [' | d', []],
    ]);
    assert.equal(text(cell(1, 1)), '2');
    assert.equal(cell(0, 2).nodes![0]!.type, 'link');
    assert.equal(text(cell(1, 2)), '');
  });

  test('images: a paragraph of images is an images block; captions in fragments; figures; inline images', () => {
    const [row, figure] = blocks.filter((n) => n.type === 'images');
    assert.deepEqual(
      row!.nodes!.map((image) => [image.type, image.isVoid, image.data, image.fragments!.map((f) => [f.fragment, text(f)])]),
      [
        ['image', true, { ref: { kind: 'url', url: 'https://img.example/one.png' }, alt: 'Alt one' }, [['caption', 'First caption']]],
        ['image', true, { ref: { kind: 'url', url: 'https://img.example/two.png' } }, []],
      ],
    );
    assert.deepEqual(figure!.nodes![0]!.data, { ref: { kind: 'url', url: 'https://img.example/fig.png' }, alt: 'Figure' });
    assert.equal(text(figure!.nodes![0]!.fragments![0]), 'A figure');
    const inline = blocks.find((n) => n.type === 'paragraph' && text(n).startsWith('Text with'))!;
    assert.deepEqual(leaves(inline), [
      ['Text with ', []],
      ['{inline-image}', []],
      [' image.', []],
    ]);
    assert.deepEqual(inline.nodes![1]!.data, { ref: { kind: 'url', url: 'https://img.example/three.png' }, alt: 'inline' });
    const file = top(markdownToDocument('![f](/files/file_9)'))[0]!;
    assert.deepEqual(file.nodes![0]!.data.ref, { kind: 'file', file: 'file_9' });
  });

  test('blockquotes nest; thematic breaks are dividers; embeds keep their URL', () => {
    const quote = blocks.find((n) => n.type === 'blockquote')!;
    assert.deepEqual(quote.nodes!.map((n) => [n.type, text(n)]), [
      ['paragraph', 'Quoted'],
      ['blockquote', 'nested'],
    ]);
    assert.deepEqual(
      withoutKeys(blocks.find((n) => n.type === 'divider')),
      { object: 'block', type: 'divider', data: {}, isVoid: true },
    );
    assert.deepEqual(blocks.find((n) => n.type === 'embed')!.data, { url: 'https://www.youtube.com/watch?v=1' });
  });

  test('containers only hold what the schema allows them to', () => {
    const md = [
      '{% hint style="danger" %}',
      '```js',
      'let a = 1;',
      '```',
      '',
      '![img](https://i.example/x.png)',
      '',
      '> quoted in a hint',
      '{% endhint %}',
      '',
      '- item',
      '',
      '  ![img](https://i.example/y.png)',
      '',
      '  {% hint style="success" %}',
      '  1. inner',
      '  {% endhint %}',
      '',
      '> | a | b |',
      '> |---|---|',
      '> | 1 | 2 |',
      '>',
      '> $$x$$',
    ].join('\n');
    const nested = markdownToDocument(md);
    assertOfficial(nested);
    const [hint, list, quote] = top(nested);
    assert.deepEqual(hint!.nodes!.map((n) => [n.type, leaves(n)]), [
      ['paragraph', [['let a = 1;', ['code']]]],
      ['paragraph', [['{inline-image}', []]]],
      ['paragraph', [['quoted in a hint', []]]],
    ]);
    const item = list!.nodes![0]!;
    assert.deepEqual(item.nodes!.map((n) => n.type), ['paragraph', 'paragraph', 'hint']);
    assert.equal(item.nodes![1]!.nodes![0]!.type, 'inline-image');
    assert.deepEqual(quote!.nodes!.map((n) => [n.type, text(n)]), [
      ['paragraph', 'a | b'],
      ['paragraph', '1 | 2'],
      ['paragraph', '{inline-math}'],
    ]);
  });

  test('the same markdown always gives the same document, with unique position keys', () => {
    assert.deepEqual(markdownToDocument(RICH), doc);
    const keys = all(doc, (n) => n.object === 'block' || n.object === 'inline' || n.object === 'fragment').map((n) => n.key);
    assert.ok(keys.every((k) => typeof k === 'string' && k.length > 0));
    assert.equal(new Set(keys).size, keys.length, 'keys are unique');
    // Keys follow position, not content: a page with the same shape gets the same keys.
    const shapeA = markdownToDocument('# A\n\n- x\n- y');
    const shapeB = markdownToDocument('# Other\n\n- one\n- two');
    assert.deepEqual(all(shapeA, (n) => !!n.key).map((n) => n.key), all(shapeB, (n) => !!n.key).map((n) => n.key));
    assert.notDeepEqual(all(shapeA, (n) => !!n.key).map((n) => n.key), all(markdownToDocument('- x\n- y'), (n) => !!n.key).map((n) => n.key));
  });

  test('keyFor receives the position path of each node', () => {
    const custom = markdownToDocument('Hi [x](https://x.example)\n\n- a\n\n| h |\n|---|\n| v |', { keyFor: (path) => `k${path}` });
    const [paragraph, list, table] = top(custom);
    assert.equal(paragraph!.key, 'k0');
    assert.equal(paragraph!.nodes![1]!.key, 'k0.1');
    assert.equal(list!.nodes![0]!.nodes![0]!.key, 'k1.0.0');
    assert.equal(table!.fragments![0]!.key, 'k2.f0');
    assert.equal(table!.fragments![0]!.nodes![0]!.key, 'k2.f0.0');
  });

  test('YAML front matter is not content', () => {
    const withMatter = markdownToDocument('---\ndescription: A page\n---\n\n# Title');
    assert.deepEqual(top(withMatter).map((n) => n.type), ['heading-1']);
    // Two rules around a paragraph are content.
    assert.deepEqual(top(markdownToDocument('---\n\nkey: value\n\n---')).map((n) => n.type), ['divider', 'paragraph', 'divider']);
  });
});

describe('documentToMarkdown', () => {
  test('round trip: the rich page reads back to the same document', () => {
    const doc = markdownToDocument(RICH);
    const again = markdownToDocument(documentToMarkdown(doc));
    assert.deepEqual(again, doc);
  });

  test('writes GitBook syntax for what markdown lacks', () => {
    const out = documentToMarkdown(markdownToDocument(RICH));
    for (const expected of [
      '{% hint style="warning" %}',
      '{% endhint %}',
      '{% code title="run.sh" lineNumbers="true" %}',
      '```bash\necho hi\n```',
      '<code class="expression">space.vars.user_name</code>',
      '$$a_1 * b_2 = \\{c\\}$$',
      '$$\n\\frac{a}{b} * c_1 \\\\\nd_2\n$$',
      '$$x^2$$',
      'H<sub>2</sub>O',
      '[a page](/pages/pg_1)',
      '[a section](/pages/pg_1#setup)',
      '#### Deep heading <a href="#custom-id" id="custom-id"></a>',
      '<figure><img src="https://img.example/one.png" alt="Alt one"><figcaption><p>First caption</p></figcaption></figure>',
      '* [x] done',
      '{% embed url="https://www.youtube.com/watch?v=1" %}',
      '| Name',
    ]) {
      assert.ok(out.includes(expected), `missing ${JSON.stringify(expected)} in:\n${out}`);
    }
  });

  test('text that looks like GitBook syntax is escaped and stays text', () => {
    const md = '\\{% hint style="info" %}\n\nPrices: \\$$5 and \\$$6, a \\<code class="expression">x\\</code>.\n\n\\{% endhint %}';
    const doc = markdownToDocument(md);
    assert.deepEqual(top(doc).map((n) => [n.type, leaves(n)]), [
      ['paragraph', [['{% hint style="info" %}', []]]],
      ['paragraph', [['Prices: $$5 and $$6, a <code class="expression">x</code>.', []]]],
      ['paragraph', [['{% endhint %}', []]]],
    ]);
    const out = documentToMarkdown(doc);
    assert.deepEqual(markdownToDocument(out), doc, `written as:\n${out}`);
  });

  test('a document written by a client becomes markdown', () => {
    const t = (text: string, marks: string[] = []) => ({ object: 'leaf', text, marks: marks.map((type) => ({ object: 'mark', type })) });
    const client = {
      object: 'document',
      data: {},
      nodes: [
        { object: 'block', type: 'heading-2', data: {}, nodes: [{ object: 'text', leaves: [t('Hello')] }] },
        {
          object: 'block',
          type: 'paragraph',
          nodes: [
            { object: 'text', leaves: [t('Bold ', ['bold']), t('and red', ['bold', 'color'])] },
            { object: 'inline', type: 'emoji', data: { code: '1f600' }, isVoid: true },
            { object: 'text', leaves: [t(' see ')] },
            { object: 'inline', type: 'link', data: { ref: { kind: 'page', page: 'p2' } }, nodes: [{ object: 'text', leaves: [t('next')] }] },
          ],
        },
        {
          object: 'block',
          type: 'expandable',
          data: {},
          isVoid: true,
          fragments: [
            { object: 'fragment', fragment: 'expandable-title', type: 'expandable-title', nodes: [{ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [t('More')] }] }] },
            { object: 'fragment', fragment: 'expandable-body', type: 'expandable-body', nodes: [{ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [t('Hidden')] }] }] },
          ],
        },
        {
          object: 'block',
          type: 'table',
          isVoid: true,
          data: {
            view: { type: 'grid', columns: ['n', 'ok'], hideHeader: false },
            definition: { n: { id: 'n', title: 'N', type: 'number' }, ok: { id: 'ok', title: 'OK', type: 'checkbox' } },
            records: { two: { orderIndex: 'a1', values: { n: 2, ok: false } }, one: { orderIndex: 'a0', values: { n: 1, ok: true } } },
          },
          fragments: [],
        },
      ],
    };
    const out = documentToMarkdown(client as unknown as GitBookDocument);
    assert.equal(
      out,
      [
        '### Hello',
        '',
        // The emoji is written as a character reference where `**` needs it to close the span.
        '**Bold <mark>and red</mark>**&#x1F600; see [next](/pages/p2)',
        '',
        '<details>',
        '',
        '<summary>More</summary>',
        '',
        'Hidden',
        '',
        '</details>',
        '',
        '<table><thead><tr><th data-type="number">N</th><th data-type="checkbox">OK</th></tr></thead><tbody><tr><td>1</td><td>true</td></tr><tr><td>2</td><td>false</td></tr></tbody></table>',
        '',
      ].join('\n'),
    );
    assertOfficial(markdownToDocument(out));
  });

  test('property: generated GitBook markdown round-trips and always validates', () => {
    const word = fc.constantFrom('a', 'b c', 'word', '*', '_', '`', '\\', '[', ']', '(', ')', '<', '>', '&', '&amp;', '#', '|', '$', '!', '~', ' ', '1.', '-', '+', '"', '{%', '%}', ':', 'www.x.y ');
    const text = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(''));
    const safe = fc.array(fc.constantFrom('a', 'b', 'word', 'x y'), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '));
    const inline = fc.oneof(
      text,
      safe.map((s) => `**${s}**`),
      safe.map((s) => `*${s}*`),
      safe.map((s) => `~~${s}~~`),
      safe.map((s) => `\`${s}\``),
      fc.tuple(safe, fc.constantFrom('https://u.example', '/pages/p1', '#anchor', './a.md')).map(([s, u]) => `[${s}](${u})`),
      safe.map((s) => `$$${s}$$`),
      fc.constant('<code class="expression">space.vars.x</code>'),
      safe.map((s) => `<sup>${s}</sup>`),
      fc.constant('![alt](https://i.example/a.png)'),
      fc.constant('<br>'),
      safe.map((s) => `**${s} *${s}***`),
    );
    const line = fc.array(inline, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(' '));
    const cell = line.map((l) => l.replace(/\|/g, '\\|'));
    const block = fc.oneof(
      line,
      fc.tuple(fc.integer({ min: 1, max: 6 }), line).map(([d, l]) => `${'#'.repeat(d)} ${l}`),
      fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((l) => `- ${l}`).join('\n')),
      fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((l, i) => `${i + 1}. ${l}`).join('\n')),
      fc.array(fc.tuple(fc.boolean(), line), { minLength: 1, maxLength: 3 }).map((ls) => ls.map(([c, l]) => `- [${c ? 'x' : ' '}] ${l}`).join('\n')),
      fc.tuple(fc.constantFrom('', 'js'), fc.array(text, { maxLength: 3 })).map(([lang, ls]) => `\`\`\`${lang}\n${ls.join('\n')}\n\`\`\``),
      line.map((l) => `> ${l}`),
      fc.tuple(fc.constantFrom('info', 'warning', 'danger', 'success'), line).map(([s, l]) => `{% hint style="${s}" %}\n${l}\n{% endhint %}`),
      fc.tuple(cell, cell).map(([a, b]) => `| h1 | h2 |\n| --- | :-: |\n| ${a} | ${b} |`),
      fc.tuple(line, line).map(([a, b]) => `- ${a}\n  - ${b}`),
      line.map((l) => `- item\n\n  {% hint style="info" %}\n  ${l}\n  {% endhint %}`),
      line.map((l) => `<div>\n${l}\n</div>`),
      safe.map((s) => `$$\n${s}\n$$`),
      fc.constant('---'),
    );
    const page = fc.array(block, { minLength: 1, maxLength: 5 }).map((bs) => bs.join('\n\n'));
    fc.assert(
      fc.property(page, (md) => {
        const doc = markdownToDocument(md);
        assertOfficial(doc);
        const out = documentToMarkdown(doc);
        const again = markdownToDocument(out);
        assert.ok(isDeepStrictEqual(again, doc), `round trip changed the document.\nmarkdown:\n${md}\nwritten as:\n${out}`);
      }),
      { numRuns: 200, seed: 20240611 },
    );
  });
});

describe('markdownSections', () => {
  test('splits at headings with unique GitBook-style anchors and plain-text bodies', () => {
    const md = [
      'Before any **heading**.',
      '',
      '# Getting Started!',
      '',
      'Install with `npm i`, then read [the docs](https://d.example).',
      '',
      '## FAQ',
      '',
      '- Is it *fast*?',
      '- Yes.',
      '',
      '## FAQ',
      '',
      '#### What’s new? (v2.0)',
      '',
      '## Mine <a href="#my-anchor" id="my-anchor"></a>',
      '',
      '## FAQ',
      'text',
    ].join('\n');
    assert.deepEqual(markdownSections(md), [
      { id: '', title: '', depth: 0, body: 'Before any heading.' },
      { id: 'getting-started', title: 'Getting Started!', depth: 1, body: 'Install with npm i, then read the docs.' },
      { id: 'faq', title: 'FAQ', depth: 2, body: 'Is it fast?\nYes.' },
      { id: 'faq-1', title: 'FAQ', depth: 2, body: '' },
      { id: 'whats-new-v20', title: 'What’s new? (v2.0)', depth: 4, body: '' },
      { id: 'my-anchor', title: 'Mine', depth: 2, body: '' },
      { id: 'faq-2', title: 'FAQ', depth: 2, body: 'text' },
    ]);
  });

  test('a page without headings is one untitled section; an empty page has none', () => {
    assert.deepEqual(markdownSections('Just text.\n\nMore.'), [{ id: '', title: '', depth: 0, body: 'Just text.\nMore.' }]);
    assert.deepEqual(markdownSections('# Only\n'), [{ id: 'only', title: 'Only', depth: 1, body: '' }]);
    assert.deepEqual(markdownSections(''), []);
  });

  test('a generated slug never takes an anchor already given out', () => {
    const ids = markdownSections('# A 1\n\n# A\n\n# A').map((s) => s.id);
    assert.deepEqual(ids, ['a-1', 'a', 'a-2']);
  });
});

describe('markdownLinks', () => {
  test('lists every link and image URL with its text, in page order', () => {
    const md = [
      'See [docs](https://docs.example "Docs") and [p](/pages/abc) and <https://auto.example>.',
      '',
      '![logo](https://img.example/logo.png) [ref link][r] ![](/files/f1)',
      '',
      '| a |',
      '|---|',
      '| [cell](https://cell.example) |',
      '',
      '{% hint style="info" %}',
      '[in hint](./other.md#part)',
      '{% endhint %}',
      '',
      '[r]: https://ref.example',
    ].join('\n');
    assert.deepEqual(markdownLinks(md), [
      { url: 'https://docs.example', text: 'docs' },
      { url: '/pages/abc', text: 'p' },
      { url: 'https://auto.example', text: 'https://auto.example' },
      { url: 'https://img.example/logo.png', text: 'logo' },
      { url: 'https://ref.example', text: 'ref link' },
      { url: '/files/f1', text: '' },
      { url: 'https://cell.example', text: 'cell' },
      { url: './other.md#part', text: 'in hint' },
    ]);
  });

  test('a page without links has none', () => {
    assert.deepEqual(markdownLinks('# Title\n\nNo `[links](here)` at all.'), []);
  });
});

describe('plainText', () => {
  test('keeps the words and drops the markdown', () => {
    const md = [
      '# Title',
      '',
      'Some **bold** and [a link](https://x.example) with `code` and $$E=mc^2$$.',
      '',
      '- item *one*',
      '- [x] item two',
      '',
      '{% hint style="info" %}',
      'Hinted.',
      '{% endhint %}',
      '',
      '```js',
      'let a = 1;',
      '```',
      '',
      '| h1 | h2 |',
      '|----|----|',
      '| c1 | c2 |',
      '',
      '![Alt text](https://i.example/x.png)',
      '',
      '---',
      '',
      'Hi <code class="expression">space.vars.name</code>!',
    ].join('\n');
    assert.equal(
      plainText(md),
      ['Title', 'Some bold and a link with code and E=mc^2.', 'item one', 'item two', 'Hinted.', 'let a = 1;', 'h1 h2', 'c1 c2', 'Alt text', 'Hi !'].join('\n'),
    );
  });
});

test('footnotes referenced from inside inline HTML, twice, or from their own body convert without running away', () => {
  // Found by the content-format property test: a reference read by a nested reader (inside an
  // inline HTML button) expanded the definition against the wrong source text, forever.
  const line = 'A <a href="https://example.com/x?a=1&#x26;b=2" class="button primary">Go</a> and a word[^1].';
  const markdown = [line, '[^1]: The note body.', line, '', 'Self[^2].', '', '[^2]: Points at itself[^2].', ''].join('\n');
  const once = documentToMarkdown(markdownToDocument(markdown));
  assert.equal(documentToMarkdown(markdownToDocument(once)), once);
  const annotations = JSON.stringify(markdownToDocument(markdown)).match(/"type":"annotation"/g) ?? [];
  assert.ok(annotations.length >= 2, `annotations: ${annotations.length}`);
});
