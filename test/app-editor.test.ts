/**
 * The app's block editor (app/src/editor/): the GitBook document ⇄ ProseMirror conversion is
 * lossless. Every GitBook-format page among the fixtures (and Folio's own docs) is read by Folio's
 * markdown reader, turned into the editor's document and back, and must come back identical (key
 * order included); the editor document must be valid for the editor's schema. Then one
 * hand-written document per block and inline type, and documents the editor itself makes (new
 * nodes, splits, pasted keys).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { editorSchema, fromProseMirror, toProseMirror, topLevelToProseMirror, type JSONDocument } from '../app/src/editor/convert.ts';
import { comparable, diffBlocks } from '../app/src/editor/diff.ts';
import { hrefOf, imageSrc, safeUrl } from '../app/src/editor/links.ts';
import { addColumn, addRow, plainCell, setCellText, setColumnTitle } from '../app/src/editor/table-edit.ts';
import { BLOCK_CHOICES, codeBlockJson, dividerJson, imagesJson, mathJson, tableJson } from '../app/src/editor/blocks.ts';
import { documentToMarkdown, markdownToDocument } from '../src/content/markdown/markdown.ts';
import { readPageFile } from '../src/git/page-file.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
/** Keys of hand-written nodes (k1, k2…). */
let keys = 0;

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** GitBook-format pages and other markdown Folio reads: the fixtures, then Folio's docs. */
function corpus(): { name: string; doc: JSONDocument }[] {
  const files = [
    ...markdownFiles(join(root, 'test/fixtures/gitbook-pages')),
    ...markdownFiles(join(root, 'test/fixtures/gitbook-constructs')),
    ...markdownFiles(join(root, 'test/fixtures/gitbook-repo')),
    join(root, 'test/fixtures/gitbook-repo.md'),
    ...markdownFiles(join(root, 'test/fixtures/content-format')),
    ...markdownFiles(join(root, 'docs')),
    join(root, 'README.md'),
  ];
  return files.map((file) => ({ name: relative(root, file), doc: markdownToDocument(readPageFile(readFileSync(file, 'utf8')).body) }));
}

/** Round trip, with the PM document checked against the schema; answers the PM JSON. */
function assertRoundTrip(doc: JSONDocument, name = 'document') {
  const pm = toProseMirror(doc);
  const node = editorSchema().nodeFromJSON(pm);
  assert.doesNotThrow(() => node.check(), `${name}: the editor document fits the schema`);
  const back = fromProseMirror(pm);
  // Same keys in the same order: compare the JSON text, then deep equality for a readable diff.
  if (JSON.stringify(back) !== JSON.stringify(doc)) assert.deepEqual(back, doc, `${name}: comes back identical`);
  assert.equal(JSON.stringify(back), JSON.stringify(doc), `${name}: key order kept`);
  return pm;
}

/** Counts the GitBook types in a document (what the corpus covers). */
function typesOf(value: unknown, into = new Map<string, number>()): Map<string, number> {
  if (Array.isArray(value)) for (const v of value) typesOf(v, into);
  else if (value && typeof value === 'object') {
    const node = value as Record<string, unknown>;
    if ((node.object === 'block' || node.object === 'inline' || node.object === 'mark') && typeof node.type === 'string') {
      into.set(node.type, (into.get(node.type) ?? 0) + 1);
    }
    for (const v of Object.values(node)) typesOf(v, into);
  }
  return into;
}

describe('GitBook document ⇄ editor document', () => {
  test('every page of the corpus comes back identical', () => {
    const pages = corpus();
    assert.ok(pages.length >= 60, `corpus of ${pages.length} pages`);
    const types = new Map<string, number>();
    for (const { name, doc } of pages) {
      assertRoundTrip(doc, name);
      typesOf(doc, types);
    }
    // The corpus exercises the model broadly: these must all be there.
    for (const type of ['paragraph', 'heading-1', 'heading-2', 'heading-3', 'list-unordered', 'list-ordered', 'list-tasks', 'hint', 'code', 'tabs', 'stepper', 'expandable', 'table', 'images', 'link', 'bold', 'italic', 'code-line', 'math', 'inline-math', 'embed', 'content-ref', 'columns', 'updates', 'if', 'annotation', 'emoji']) {
      assert.ok(types.has(type), `the corpus has ${type}`);
    }
  });

  test('documents made from generated markdown come back identical', () => {
    const safe = fc.array(fc.constantFrom('a', 'b', 'word', 'x y', '😀', 'é'), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '));
    const inline = fc.oneof(
      safe,
      safe.map((s) => `**${s}**`),
      safe.map((s) => `*${s}*`),
      safe.map((s) => `~~${s}~~`),
      safe.map((s) => `\`${s}\``),
      safe.map((s) => `<sup>${s}</sup>`),
      safe.map((s) => `<mark style="color:red;">${s}</mark>`),
      fc.tuple(safe, fc.constantFrom('https://u.example', '/pages/p1', '#anchor', '/files/f1', 'javascript:alert(1)')).map(([s, u]) => `[${s}](${u})`),
      fc.constant('[](https://empty.example)'),
      fc.constant('<code class="expression">space.vars.x</code>'),
      fc.constant('$$x^2$$'),
      fc.constant('![alt](https://i.example/a.png)'),
      fc.constant('<br>'),
      fc.constant('word[^1]\n\n[^1]: note'),
    );
    const line = fc.array(inline, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(' '));
    const block = fc.oneof(
      line,
      fc.tuple(fc.integer({ min: 2, max: 4 }), line).map(([d, l]) => `${'#'.repeat(d)} ${l}`),
      fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((l) => `- ${l}`).join('\n')),
      fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((l, i) => `${i + 3}. ${l}`).join('\n')),
      fc.array(fc.tuple(fc.boolean(), line), { minLength: 1, maxLength: 3 }).map((ls) => ls.map(([c, l]) => `- [${c ? 'x' : ' '}] ${l}`).join('\n')),
      fc.tuple(fc.constantFrom('', 'js'), fc.array(safe, { maxLength: 3 })).map(([lang, ls]) => `\`\`\`${lang}\n${ls.join('\n')}\n\`\`\``),
      fc.tuple(fc.constantFrom('info', 'warning', 'danger', 'success'), line).map(([s, l]) => `{% hint style="${s}" %}\n${l}\n{% endhint %}`),
      fc.tuple(line, line).map(([a, b]) => `| h1 | h2 |\n| --- | :-: |\n| ${a} | ${b} |`),
      fc.tuple(line, line).map(([a, b]) => `- ${a}\n  - ${b}`),
      fc.tuple(line, line).map(([a, b]) => `> ${a}\n>\n> ${b}`),
      fc.tuple(safe, line).map(([a, b]) => `{% tabs %}\n{% tab title="${a}" %}\n${b}\n{% endtab %}\n{% endtabs %}`),
      fc.tuple(safe, line).map(([a, b]) => `<details>\n<summary>${a}</summary>\n\n${b}\n\n</details>`),
      fc.constant('{% tabs %}\n{% endtabs %}'),
      fc.constant('{% hint style="info" %}\n{% endhint %}'),
      fc.constant('{% stepper %}\n{% step %}\nOne\n{% endstep %}\n{% endstepper %}'),
      fc.constant('---'),
      fc.constant('$$\ny = mx\n$$'),
    );
    const page = fc.array(block, { minLength: 0, maxLength: 5 }).map((bs) => bs.join('\n\n'));
    fc.assert(
      fc.property(page, (markdown) => {
        assertRoundTrip(markdownToDocument(markdown), markdown);
      }),
      { numRuns: 200 },
    );
  });

  describe('hand-written documents, one per block and inline type', () => {
    for (const [name, nodes] of Object.entries(handWritten())) {
      test(name, () => {
        assertRoundTrip(doc(nodes), name);
      });
    }
  });

  test('what cannot be held richly stays whole as an atom, where it stands', () => {
    const odd = [
      // A tabs block without tabs, a list holding a paragraph, a code block in a hint (not allowed there).
      block('tabs', {}, []),
      block('list-unordered', {}, [para('not an item')]),
      block('hint', { style: 'info' }, [code(['x'])]),
      // Texts with a key, marked text in a code line, an empty link, a type from a later schema.
      block('paragraph', {}, [{ object: 'text', key: 'tk', leaves: [leaf('keyed')] }]),
      block('code', {}, [block('code-line', {}, [{ object: 'text', leaves: [leaf('b', [{ object: 'mark', type: 'bold' }])] }])]),
      block('paragraph', {}, [inline('link', { ref: { kind: 'url', url: 'https://x.example' } }, [text('')])]),
      { object: 'block', type: 'future-block', key: 'fb', data: { anything: [1, 2] }, isVoid: true },
    ];
    const pm = assertRoundTrip({ object: 'document', data: { schemaVersion: 1 }, nodes: odd } as unknown as JSONDocument);
    const kinds = (pm.content ?? []).map((n) => n.type);
    assert.deepEqual(kinds, ['gbBlock', 'gbBlock', 'hint', 'gbBlock', 'gbBlock', 'paragraph', 'gbBlock']);
    assert.equal(pm.content![2]!.content![0]!.type, 'gbBlock');
    assert.equal(pm.content![5]!.content![0]!.type, 'gbInline');
  });

  test('an empty page and empty containers', () => {
    assertRoundTrip({ object: 'document', data: { schemaVersion: 1 }, nodes: [] } as JSONDocument, 'empty page');
    assertRoundTrip(doc([block('hint', { style: 'warning' }, []), block('if', { expression: 'x' }, [])]), 'empty hint and condition');
  });
});

describe('documents the editor makes', () => {
  const schema = editorSchema();

  test('new nodes (no stored GitBook node) get the shape Folio gives them', () => {
    const pm = {
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Title' }] },
        { type: 'paragraph', content: [{ type: 'text', text: 'a ' }, { type: 'text', text: 'b', marks: [{ type: 'bold' }, { type: 'color', attrs: { text: 'red', background: 'default' } }] }] },
        { type: 'taskList', content: [{ type: 'taskItem', content: [{ type: 'paragraph' }] }] },
        { type: 'orderedList', content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'one' }] }] }] },
        { type: 'hint', content: [{ type: 'paragraph' }] },
        { type: 'codeBlock', content: [{ type: 'codeLine', content: [{ type: 'text', text: 'let x;' }] }, { type: 'codeLine' }] },
        { type: 'tabs', content: [{ type: 'tabsItem', content: [{ type: 'paragraph', attrs: { placeholder: true } }] }] },
        { type: 'expandable', content: [{ type: 'expandableTitle', content: [{ type: 'paragraph' }] }, { type: 'expandableBody', content: [{ type: 'paragraph' }] }] },
        { type: 'gbBlock', attrs: { json: { object: 'block', type: 'divider', data: {}, isVoid: true } } },
      ],
    };
    assert.doesNotThrow(() => schema.nodeFromJSON(pm).check());
    const out = fromProseMirror(pm);
    const empty = [{ object: 'text', leaves: [{ object: 'leaf', text: '', marks: [] }] }];
    assert.deepEqual(out, {
      object: 'document',
      data: { schemaVersion: 1 },
      nodes: [
        { object: 'block', type: 'heading-2', data: {}, nodes: [text('Title')] },
        {
          object: 'block',
          type: 'paragraph',
          data: {},
          nodes: [{ object: 'text', leaves: [leaf('a '), leaf('b', [{ object: 'mark', type: 'color', data: { text: 'red', background: 'default' } }, { object: 'mark', type: 'bold' }])] }],
        },
        { object: 'block', type: 'list-tasks', data: {}, nodes: [{ object: 'block', type: 'list-item', data: { checked: false }, nodes: [{ object: 'block', type: 'paragraph', data: {}, nodes: empty }] }] },
        { object: 'block', type: 'list-ordered', data: {}, nodes: [{ object: 'block', type: 'list-item', data: {}, nodes: [para('one')] }] },
        { object: 'block', type: 'hint', data: { style: 'info' }, nodes: [{ object: 'block', type: 'paragraph', data: {}, nodes: empty }] },
        { object: 'block', type: 'code', data: {}, nodes: [{ object: 'block', type: 'code-line', data: {}, nodes: [text('let x;')] }, { object: 'block', type: 'code-line', data: {}, nodes: empty }] },
        { object: 'block', type: 'tabs', data: {}, nodes: [{ object: 'block', type: 'tabs-item', data: { title: '' }, nodes: [] }] },
        {
          object: 'block',
          type: 'expandable',
          data: {},
          fragments: [
            { object: 'fragment', fragment: 'expandable-title', type: 'expandable-title', nodes: [{ object: 'block', type: 'paragraph', data: {}, nodes: empty }] },
            { object: 'fragment', fragment: 'expandable-body', type: 'expandable-body', nodes: [{ object: 'block', type: 'paragraph', data: {}, nodes: empty }] },
          ],
          isVoid: true,
        },
        { object: 'block', type: 'divider', data: {}, isVoid: true },
      ],
    });
  });

  test('a heading changed to another level, and a task item moved to a bulleted list, keep their key', () => {
    const original = doc([
      { object: 'block', type: 'heading-1', key: 'h', data: { id: 'intro' }, nodes: [text('Intro')] },
      block('list-tasks', {}, [{ object: 'block', type: 'list-item', key: 'li', data: { checked: true }, nodes: [para('done')] }]),
    ]);
    const pm = toProseMirror(original);
    pm.content![0]!.attrs!.level = 3;
    pm.content![1]!.type = 'bulletList';
    pm.content![1]!.content![0]!.type = 'listItem';
    const out = fromProseMirror(pm) as unknown as { nodes: Record<string, unknown>[] };
    assert.deepEqual(out.nodes[0], { object: 'block', type: 'heading-3', key: 'h', data: { id: 'intro' }, nodes: [text('Intro')] });
    assert.deepEqual((out.nodes[1]!.nodes as unknown[])[0], { object: 'block', type: 'list-item', key: 'li', data: {}, nodes: [para('done')] });
    assert.equal(out.nodes[1]!.type, 'list-unordered');
  });
});

describe('inserted blocks and loading in pieces', () => {
  const schema = editorSchema();

  test('every block the / menu offers by name, and what it inserts, is valid and converts to the GitBook type', () => {
    const names = BLOCK_CHOICES.map((c) => c.name);
    for (const name of ['Hint', 'Code block', 'Tabs', 'Heading 1', 'Bulleted list', 'Table', 'Expandable', 'Stepper', 'Image', 'Math', 'Divider', 'Quote', 'Task list', 'Numbered list']) {
      assert.ok(names.includes(name), `the menu has ${name}`);
    }
    const made = [codeBlockJson('ts'), dividerJson(), mathJson('x^2'), tableJson(2, 2), imagesJson([{ id: 'file-9', alt: 'Shot' }])];
    const pm = { type: 'doc', content: made };
    assert.doesNotThrow(() => schema.nodeFromJSON(pm).check());
    const out = fromProseMirror(pm) as unknown as { nodes: Json[] };
    assert.deepEqual(out.nodes.map((n) => n.type), ['code', 'divider', 'math', 'table', 'images']);
    assert.deepEqual(out.nodes[0]!.data, { syntax: 'ts' });
    assert.deepEqual(((out.nodes[4]!.nodes as Json[])[0]!.data as Json).ref, { kind: 'file', file: 'file-9' });
    // A document made of them round-trips too.
    assertRoundTrip(out as unknown as JSONDocument, 'inserted blocks');
  });

  test('what the editor makes is what Folio stores: written as markdown and read back, it is the same document', () => {
    const pm = {
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'Install' }] },
        { type: 'paragraph', content: [{ type: 'text', text: 'Run ' }, { type: 'text', text: 'it', marks: [{ type: 'code' }] }, { type: 'text', text: ' now', marks: [{ type: 'italic' }] }] },
        { type: 'hint', attrs: { gb: { object: 'block', type: 'hint', data: { style: 'warning' }, nodes: null } }, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Careful' }] }] },
        codeBlockJson('js'),
        { type: 'taskList', content: [{ type: 'taskItem', attrs: { gb: { object: 'block', type: 'list-item', data: { checked: true }, nodes: null } }, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'done' }] }] }] },
        { type: 'tabs', content: [{ type: 'tabsItem', attrs: { gb: { object: 'block', type: 'tabs-item', data: { title: 'One' }, nodes: null } }, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'first' }] }] }] },
        { type: 'expandable', content: [{ type: 'expandableTitle', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'More' }] }] }, { type: 'expandableBody', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Hidden' }] }] }] },
        { type: 'stepper', content: [{ type: 'stepperStep', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Step' }] }] }] },
        mathJson('x^2'),
        dividerJson(),
        tableJson(2, 2),
        imagesJson([{ id: 'file-1', alt: 'Shot' }]),
        { type: 'paragraph', content: [{ type: 'text', text: 'link', marks: [{ type: 'link', attrs: { gb: { object: 'inline', type: 'link', data: { ref: { kind: 'url', url: 'https://x.example' } }, nodes: null, isVoid: false } } }] }] },
      ],
    };
    const made = fromProseMirror(pm);
    const stored = markdownToDocument(documentToMarkdown(made));
    assert.deepEqual(JSON.parse(comparable(stored)), JSON.parse(comparable(made)));
  });

  test('top-level blocks converted one by one make the whole page', () => {
    for (const { name, doc: page } of corpus().slice(0, 20)) {
      const whole = toProseMirror(page).content;
      const pieces = page.nodes.flatMap((block) => topLevelToProseMirror([block]));
      if (page.nodes.length > 0) assert.deepEqual(pieces, whole, name);
    }
  });
});

describe('what changed between two versions (DiffView)', () => {
  const para = (t: string, key?: string) => ({ object: 'block', type: 'paragraph', ...(key ? { key } : {}), data: {}, nodes: [text(t)] });
  const page = (...nodes: Json[]) => doc(nodes);

  test('blocks added, removed and changed; keys do not count', () => {
    const before = page(para('a', 'k0'), para('b', 'k1'), para('c', 'k2'), para('d', 'k3'));
    // "x" inserted first shifts every key; "c" changed to "C".
    const after = page(para('x', 'k0'), para('a', 'k1'), para('b', 'k2'), para('C', 'k3'), para('d', 'k4'));
    const textOf = (block: unknown) => JSON.stringify(block).match(/"text":"(\w)"/)?.[1];
    const entries = diffBlocks(before, after).map((e) => `${e.status}:${textOf(e.block)}`);
    assert.deepEqual(entries, ['added:x', 'same:a', 'same:b', 'removed:c', 'added:C', 'same:d']);
  });

  test('a new page is all added, a deleted one all removed, equal pages unchanged', () => {
    const one = page(para('a'), para('b'));
    assert.deepEqual(diffBlocks(null, one).map((e) => e.status), ['added', 'added']);
    assert.deepEqual(diffBlocks(one, null).map((e) => e.status), ['removed', 'removed']);
    assert.deepEqual(diffBlocks(one, structuredClone(one)).map((e) => e.status), ['same', 'same']);
    assert.equal(comparable({ object: 'block', key: 'x', data: { key: 'kept' } }), '{"object":"block","data":{"key":"kept"}}');
  });

  test('two long versions are compared quickly', () => {
    const blocks = Array.from({ length: 2000 }, (_, i) => para(`p${i}`));
    const changed = blocks.map((b, i) => (i % 50 === 0 ? para(`changed ${i}`) : b));
    const started = performance.now();
    const entries = diffBlocks(page(...blocks), page(...changed));
    assert.ok(performance.now() - started < 2000);
    assert.equal(entries.filter((e) => e.status === 'added').length, 40);
  });
});

describe('tables edited as a grid', () => {
  test('cell and title edits, rows and columns added: a table Folio reads, rich cells untouched', () => {
    const made = fromProseMirror({ type: 'doc', content: [tableJson(2, 1)] }) as unknown as { nodes: Json[] };
    let table = made.nodes[0]! as Parameters<typeof setCellText>[0];
    table = setColumnTitle(table, 'c0', 'Name');
    table = setCellText(table, 'r0', 'c0', 'Ada');
    table = addRow(table);
    table = addColumn(table);
    table = setCellText(table, 'r1', 'c2', 'new');
    const data = table.data as { view: { columns: string[] }; definition: Record<string, { title: string }>; records: Record<string, { orderIndex: string; values: Record<string, string> }> };
    assert.deepEqual(data.view.columns, ['c0', 'c1', 'c2']);
    assert.equal(data.definition.c0!.title, 'Name');
    const order = Object.values(data.records).map((r) => r.orderIndex);
    assert.deepEqual([...order].sort(), order, 'new rows sort after the others');
    const cell = (record: string, column: string) => plainCell(table.fragments!.find((f) => f.fragment === data.records[record]!.values[column]));
    assert.equal(cell('r0', 'c0'), 'Ada');
    assert.equal(cell('r1', 'c2'), 'new');
    assert.equal(cell('r1', 'c0'), '');
    // Every cell of a text column has its fragment; the table is one Folio's writer reads back.
    for (const record of Object.values(data.records)) for (const column of data.view.columns) assert.ok(table.fragments!.some((f) => f.fragment === record.values[column]));
    assertRoundTrip(doc([table as unknown as Json]), 'edited table');
    const rich = { object: 'fragment', fragment: 'x', nodes: [{ object: 'block', type: 'paragraph', data: {}, nodes: [text('b', [{ object: 'mark', type: 'bold' }])] }] };
    assert.equal(plainCell(rich as never), null, 'a cell with marks is not offered as plain text');
  });
});

describe('links and images only where safe', () => {
  test('javascript: and data: URLs never become hrefs or image sources', () => {
    assert.equal(safeUrl('javascript:alert(1)'), undefined);
    assert.equal(safeUrl(' JavaScript:alert(1)'), undefined);
    assert.equal(safeUrl('data:text/html,<script>'), undefined);
    assert.equal(safeUrl('https://x.example/a?b'), 'https://x.example/a?b');
    assert.equal(hrefOf({ kind: 'url', url: 'vbscript:x' }), undefined);
    assert.equal(hrefOf({ kind: 'url', url: 'mailto:a@b.example' }), 'mailto:a@b.example');
    assert.equal(hrefOf({ kind: 'anchor', anchor: 'sec "1"' }), '#sec%20%221%22');
    assert.equal(hrefOf({ kind: 'file', file: 'f1' }, { fileURL: () => '/v1/files/f1/content' }), '/v1/files/f1/content');
    assert.equal(hrefOf({ kind: 'file', file: 'f1' }, { fileURL: () => 'javascript:x' }), undefined);
    assert.equal(imageSrc({ kind: 'url', url: 'data:image/png;base64,AAAA' }, {}), undefined);
    assert.equal(imageSrc({ kind: 'file', file: 'f1' }, { fileURL: () => 'https://cdn.example/f1.png' }), 'https://cdn.example/f1.png');
  });
});

// ── builders ──

type Json = Record<string, unknown>;

function leaf(textValue: string, marks: Json[] = []): Json {
  return { object: 'leaf', text: textValue, marks };
}
function text(value: string, marks: Json[] = []): Json {
  return { object: 'text', leaves: [leaf(value, marks)] };
}
function block(type: string, data: Json, nodes?: Json[], extra: Json = {}): Json {
  return { object: 'block', type, key: `k${++keys}`, data, ...(nodes ? { nodes } : {}), ...extra };
}
function inline(type: string, data: Json, nodes?: Json[], extra: Json = {}): Json {
  return { object: 'inline', type, key: `i${++keys}`, data, ...(nodes ? { nodes } : {}), ...extra, isVoid: nodes === undefined };
}
function para(value: string): Json {
  return { object: 'block', type: 'paragraph', data: {}, nodes: [text(value)] };
}
function code(lines: string[], data: Json = {}): Json {
  return block('code', data, lines.map((l) => block('code-line', {}, [text(l)])));
}
function doc(nodes: Json[]): JSONDocument {
  return { object: 'document', data: { schemaVersion: 1 }, nodes } as unknown as JSONDocument;
}
function fragment(name: string, nodes: Json[], typed = true): Json {
  return { object: 'fragment', key: `f${++keys}`, fragment: name, ...(typed ? { type: name } : {}), nodes };
}

function handWritten(): Record<string, Json[]> {
  const file = { kind: 'file', file: 'file-1' };
  const marks = (...types: string[]) => types.map((type) => ({ object: 'mark', type }));
  return {
    paragraph: [block('paragraph', { align: 'center' }, [text('Centred')])],
    'paragraph with every mark': [
      block('paragraph', {}, [
        {
          object: 'text',
          leaves: [
            leaf('plain '),
            leaf('all', [{ object: 'mark', type: 'color', data: { text: 'blue', background: '$warning' } }, ...marks('bold', 'italic', 'strikethrough', 'superscript', 'subscript', 'keyboard', 'code')]),
            leaf(' line\nbreak', marks('italic')),
          ],
        },
      ]),
    ],
    headings: [block('heading-1', { id: 'custom-id' }, [text('One')]), block('heading-2', {}, [text('Two')]), block('heading-3', { align: 'end' }, [text('Three')])],
    'bulleted list, nested': [
      block('list-unordered', {}, [block('list-item', {}, [block('paragraph', {}, [text('a')]), block('list-unordered', {}, [block('list-item', {}, [block('paragraph', {}, [text('b')])])])])]),
    ],
    'numbered list starting at 3': [block('list-ordered', { start: 3 }, [block('list-item', {}, [block('paragraph', {}, [text('c')]), code(['in item'])])])],
    'task list': [block('list-tasks', {}, [block('list-item', { checked: true }, [block('paragraph', {}, [text('done')])]), block('list-item', { checked: false }, [block('paragraph', {}, [text('todo')])])])],
    quote: [block('blockquote', {}, [block('paragraph', {}, [text('quoted')]), block('blockquote', {}, [block('paragraph', {}, [text('nested')])])])],
    hints: ['info', 'success', 'warning', 'danger'].map((style) => block('hint', { style, ...(style === 'danger' ? { icon: 'fire' } : {}) }, [block('paragraph', {}, [text(style)])])),
    code: [
      block('code', { syntax: 'ts', title: 'a.ts', lineNumbers: true, overflow: 'wrap', fullWidth: true, expandable: true, collapsedLineCount: 3 }, [
        block('code-line', { highlighted: true }, [text('  const x = 1;')]),
        block('code-line', {}, [text('')]),
        block('code-line', {}, [text('x'), inline('expression', { expression: 'space.vars.v' }), text(' '), inline('annotation', {}, [text('note')], { fragments: [fragment('annotation-body', [para('why')])] })]),
      ]),
    ],
    tabs: [
      block('tabs', {}, [
        block('tabs-item', { title: 'First', icon: 'star' }, [block('paragraph', {}, [text('one')])]),
        block('tabs-item', { title: 'Second', slug: 's2' }, [code(['two'], { syntax: 'js' }), block('images', {}, [block('image', { ref: file }, undefined, { fragments: [], isVoid: true })], { isVoid: false })]),
      ]),
    ],
    stepper: [block('stepper', {}, [block('stepper-step', { icon: 'check' }, [block('paragraph', {}, [text('Step one')])]), block('stepper-step', {}, [block('paragraph', {}, [text('Step two')])])])],
    expandable: [
      block('expandable', { defaultExpanded: true }, undefined, {
        fragments: [fragment('expandable-title', [block('paragraph', {}, [text('More')])]), fragment('expandable-body', [block('paragraph', {}, [text('Hidden')]), code(['x'])])],
        isVoid: true,
      }),
    ],
    'table (grid) and cards': [
      block('table', {
        view: { type: 'grid', columns: ['c0', 'c1'], hideHeader: false, columnWidths: { c0: 40 } },
        records: { r0: { orderIndex: 'a0', values: { c0: 'r0c0', c1: 3 } } },
        definition: { c0: { id: 'c0', title: 'Name', type: 'text', textAlignment: 'left' }, c1: { id: 'c1', title: 'Count', type: 'number' } },
      }, undefined, { fragments: [fragment('r0c0', [para('cell')], false)], isVoid: true }),
      block('table', {
        view: { type: 'cards', columns: ['c0'], cardSize: 'medium', targetDefinition: 'c1' },
        records: { r0: { orderIndex: 'a0', values: { c0: 'r0c0', c1: { kind: 'page', page: 'p1' } } } },
        definition: { c0: { id: 'c0', title: 'Title', type: 'text', textAlignment: 'left' }, c1: { id: 'c1', title: 'Target', type: 'content-ref' } },
      }, undefined, { fragments: [fragment('r0c0', [para('card')], false)], isVoid: true }),
    ],
    images: [
      block('images', { align: 'center', fullWidth: false }, [
        block('image', { ref: file, refDark: { kind: 'url', url: 'https://x.example/d.png' }, width: { unit: '%', value: 50 }, alt: 'A' }, undefined, {
          fragments: [{ object: 'fragment', fragment: 'caption', nodes: [para('Caption')] }],
          isVoid: true,
        }),
      ], { isVoid: false }),
    ],
    file: [block('file', { ref: file }, undefined, { isVoid: true })],
    drawing: [block('drawing', { ref: file }, undefined, { isVoid: true })],
    embed: [block('embed', { url: 'https://youtube.example/v', fullWidth: true }, undefined, { isVoid: true })],
    math: [block('math', { formula: '\\frac{a}{b}' }, undefined, { isVoid: true })],
    divider: [block('divider', {}, undefined, { isVoid: true })],
    openapi: [
      block('swagger', { ref: { kind: 'url', url: 'https://x.example/o.yaml' }, path: '/pets', method: 'get', expanded: true }, undefined, { isVoid: true }),
      block('openapi-operation', { ref: { kind: 'openapi', spec: 'petstore' }, path: '/pets', method: 'post' }, undefined, { isVoid: true }),
      block('openapi-schemas', { ref: { kind: 'openapi', spec: 'petstore' }, schemas: ['Pet'], grouped: false }, undefined, { isVoid: true }),
      block('openapi-webhook', { ref: { kind: 'openapi', spec: 'petstore' }, name: 'newPet', method: 'post' }, undefined, { isVoid: true }),
    ],
    'content ref and reusable content': [
      block('content-ref', { ref: { kind: 'page', page: 'p2' } }, undefined, { isVoid: true }),
      block('reusable-content', { ref: { kind: 'reusable-content', reusableContent: 'rc1' } }, undefined, { isVoid: true }),
    ],
    integration: [block('integration', { integration: 'mermaid', block: 'diagram', props: { content: 'graph TD' } }, undefined, { isVoid: true })],
    prompt: [block('prompt', { description: 'Ask', defaultExpanded: 'partial' }, [code(['Do this'])])],
    'if (conditional)': [block('if', { expression: 'visitor.claims.pro' }, [block('paragraph', {}, [text('Pro only')]), block('hint', { style: 'info' }, [para('x')])])],
    columns: [block('columns', { fullWidth: true }, [block('column', { width: { unit: '%', value: 50 }, verticalAlignment: 'middle' }, [para('left')]), block('column', {}, [para('right')])], { isVoid: false })],
    updates: [block('updates', { format: 'short' }, [block('update', { date: '2024-01-02T00:00:00.000Z', tags: [{ kind: 'tag', tag: 'new' }] }, [para('Shipped')])])],
    'links to urls, pages, anchors and files': [
      block('paragraph', {}, [
        text('See '),
        inline('link', { ref: { kind: 'url', url: 'https://x.example' } }, [text('site', marks('bold'))]),
        text(', '),
        inline('link', { ref: { kind: 'page', page: 'p1', space: 's1' } }, [text('page')]),
        inline('link', { ref: { kind: 'anchor', anchor: 'a1' } }, [text('anchor')]),
        inline('link', { ref: { kind: 'file', file: 'f1' } }, [text('file '), inline('inline-image', { ref: file, alt: 'i' })]),
        inline('link', { ref: { kind: 'url', url: 'javascript:alert(1)' } }, [text('bad')]),
        text('.'),
      ]),
    ],
    'inlines: emoji, icon, expression, math, image, mention, button, annotation': [
      block('paragraph', {}, [
        inline('emoji', { code: '1f600' }),
        inline('icon', { icon: 'star', color: 'red' }),
        inline('expression', { expression: 'space.vars.name' }),
        inline('inline-math', { formula: 'e^{i\\pi}' }),
        inline('inline-image', { ref: { kind: 'url', url: 'https://x.example/i.png' }, size: 'line', caption: 'c' }),
        inline('mention', { ref: { kind: 'user', user: 'u1' } }),
        inline('button', { label: 'Go', kind: 'primary', ref: { kind: 'url', url: 'https://x.example' } }),
        inline('button', { label: 'Ask', kind: 'secondary', action: { action: 'ask', query: 'q' } }),
        text('the '),
        inline('annotation', {}, [text('word', marks('italic'))], { fragments: [fragment('annotation-body', [para('A note'), code(['c'])])] }),
      ]),
    ],
  };
}
