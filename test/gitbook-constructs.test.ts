import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { readFrontMatter, writeFrontMatter } from '../src/content/markdown/front-matter.ts';
import { documentToMarkdown, markdownToDocument } from '../src/content/markdown/markdown.ts';
import { newOrg } from './support/factories.ts';
import { CONSTRUCTS, formatFigures, loadCorpus, measure } from './support/gitbook-constructs.ts';
import { gitSyncHarness } from './support/git-sync.ts';

/**
 * GitBook constructs that were read as plain text (issue 23), on pages written for these tests in
 * the form GitBook writes them (test/fixtures/gitbook-constructs): `<pre>` code with highlighted
 * lines, `{% file %}` with spaces and parentheses in the path, Font Awesome icons in text and card
 * tables, HTML tables with `<th width>`, `<div><figure>` images, tabs, steppers, and a cover with the
 * current layout front matter. The per-construct figures of the fixtures are printed; the same
 * count runs on real repositories with `npm run bench:gitbook-constructs`.
 */

const FIXTURES = new URL('./fixtures/gitbook-constructs/', import.meta.url).pathname;
const fixture = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');

type Node = { type?: string; object?: string; data?: any; nodes?: Node[]; fragments?: Node[]; leaves?: { text: string }[] };
const all = (nodes: Node[] | undefined, out: Node[] = []): Node[] => {
  for (const n of nodes ?? []) {
    out.push(n);
    all(n.nodes, out);
    all(n.fragments, out);
  }
  return out;
};
const textOf = (n: Node): string => (n.object === 'text' ? (n.leaves ?? []).map((l) => l.text).join('') : (n.nodes ?? []).map(textOf).join(''));
const codeLines = (block: Node) => (block.nodes ?? []).map((line) => ({ text: textOf(line), highlighted: line.data?.highlighted === true }));

test('every construct of the fixture pages is kept as its block, and again after a round trip', () => {
  const figures = measure(loadCorpus(FIXTURES, 'fixtures'));
  const report = formatFigures(figures, 'GitBook constructs in test/fixtures/gitbook-constructs');
  console.log(report);
  for (const c of CONSTRUCTS) {
    const f = figures[c];
    assert.ok(f.total > 0, `the fixtures hold no ${c}`);
    assert.equal(f.kept, f.total, `${c}: ${f.kept} of ${f.total} kept (${f.missed.join(', ')})`);
    assert.equal(f.roundTrip, f.total, `${c}: ${f.roundTrip} of ${f.total} kept after a round trip`);
  }
});

describe('code blocks written as <pre>', () => {
  const page = fixture('guides/highlighted-code.md');
  const doc = markdownToDocument(page);
  const codes = all(doc.nodes as Node[]).filter((n) => n.type === 'code');

  test('become code blocks with their language, options and highlighted lines', () => {
    const [yaml, bash, python, plainBlock] = [codes[0]!, codes[1]!, codes[2]!, codes[4]!];
    assert.deepEqual(yaml.data, { syntax: 'yaml', title: 'station.yaml' });
    assert.deepEqual(codeLines(yaml), [
      { text: 'station:', highlighted: false },
      { text: '  name: ridge-north', highlighted: false },
      { text: '  interval: 300', highlighted: true },
      { text: '  sensors:', highlighted: false },
      { text: '    - humidity', highlighted: true },
      { text: '    - pressure', highlighted: true },
    ]);
    assert.deepEqual(bash.data, { syntax: 'bash', overflow: 'wrap', lineNumbers: true });
    assert.deepEqual(codeLines(bash), [
      { text: 'station-cli upload --since "2024-01-01" && echo done', highlighted: true },
      { text: 'station-cli status | grep -v "<idle>"', highlighted: false },
    ]);
    // In a tab too.
    assert.equal(python.data.syntax, 'python');
    assert.deepEqual(codeLines(python).map((l) => l.highlighted), [false, true, false]);
    // `<em>` has no place in a code line: its text stays. A highlighted empty last line is a line.
    assert.deepEqual(plainBlock.data, {});
    assert.deepEqual(codeLines(plainBlock), [
      { text: 'plain note here', highlighted: false },
      { text: '', highlighted: true },
    ]);
  });

  test('are written back the way GitBook writes them (highlighted lines in <strong>, `&` and `<` escaped)', () => {
    const markdown = documentToMarkdown(doc);
    for (const block of page.split(/\n\n/).filter((part) => part.startsWith('<pre class='))) assert.ok(markdown.includes(block), `not written back as is:\n${block}\n---\n${markdown}`);
    assert.match(markdown, /<pre><code>plain note here\n<strong>\n<\/strong><\/code><\/pre>/);
    // A block without highlighted lines stays a fence.
    assert.match(markdown, /```bash\nstation-cli read ridge-north\n```/);
    assert.deepEqual(markdownToDocument(markdown), doc);
  });

  test('keep GitBook tags, `$$` and blank lines inside them as code', () => {
    const doc = markdownToDocument('<pre class="language-liquid"><code class="lang-liquid">{% if user %}\n\n<strong>price: $$10$$\n</strong>{% endif %}\n</code></pre>\n');
    assert.equal(doc.nodes.length, 1);
    assert.deepEqual(codeLines(doc.nodes[0] as Node), [
      { text: '{% if user %}', highlighted: false },
      { text: '', highlighted: false },
      { text: 'price: $$10$$', highlighted: true },
      { text: '{% endif %}', highlighted: false },
    ]);
  });
});

describe('icons and HTML tables', () => {
  test('icons in text and in card cells are icon inlines; card titles are headings', () => {
    const doc = markdownToDocument(fixture('README.md'));
    const icons = all(doc.nodes as Node[]).filter((n) => n.type === 'icon').map((n) => n.data.icon);
    assert.deepEqual(icons, ['temperature-half', 'screwdriver-wrench', 'gauge', 'file-arrow-down']);
    const cards = doc.nodes.find((n) => n.type === 'table') as Node;
    const firstCell = cards.fragments!.find((f) => (f as { fragment?: string }).fragment === 'r0c0')!;
    assert.equal(firstCell.nodes![0]!.type, 'heading-3');
    assert.equal(firstCell.nodes![0]!.nodes![0]!.type, 'icon');
    const markdown = documentToMarkdown(doc);
    assert.match(markdown, /<td><h\d><i class="fa-screwdriver-wrench">:screwdriver-wrench:<\/i><\/h\d><\/td>/);
    assert.deepEqual(markdownToDocument(markdown), doc);
  });

  test('tables with <th width> are tables with their column widths', () => {
    const doc = markdownToDocument(fixture('guides/tables.md'));
    const tables = doc.nodes.filter((n) => n.type === 'table') as Node[];
    assert.equal(tables.length, 2);
    assert.deepEqual(tables[0]!.data.view.columnWidths, { c0: 180.5, c1: 320 });
    assert.deepEqual(Object.values(tables[0]!.data.definition).map((d: any) => d.title), ['Sensor', 'Range', 'Icon']);
    assert.deepEqual(tables[1]!.data.view.columnWidths, { c0: 200 });
    assert.ok(all(tables[0]!.fragments).some((n) => n.type === 'icon' && n.data.icon === 'droplet'));
  });
});

test('front matter: the current layout syntax (cover size background, mask) survives a round trip', () => {
  const page = fixture('README.md');
  const { metadata } = readFrontMatter(page);
  assert.equal(metadata.layout?.coverSize, 'background');
  assert.equal(metadata.layout?.coverMask, 'radial');
  const yaml = (text: string) => parseYaml(/^---\n([\s\S]*?)\n---/.exec(text)![1]!);
  const written = writeFrontMatter(metadata);
  assert.deepEqual(yaml(written).layout, yaml(page).layout);
  assert.equal(yaml(written).cover, '.gitbook/assets/hero (1).png');
  // The layout block is written in GitBook's order, line for line.
  const layoutBlock = (text: string) => /\nlayout:\n(?: {2}.*\n)+/.exec(text)![0];
  assert.equal(layoutBlock(written), layoutBlock(page));
});

describe('through git sync and the API', () => {
  const { h, importRepo, exportRepo, pages, flatten, newSpace } = gitSyncHarness();

  /** The fixture directory as repository files under `site/`. */
  function repoFiles(): Record<string, Buffer> {
    const out: Record<string, Buffer> = {};
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const full = join(dir, name);
        if (statSync(full).isDirectory()) walk(full);
        else out[`site/${relative(FIXTURES, full)}`] = readFileSync(full);
      }
    };
    walk(FIXTURES);
    return out;
  }

  test('a file block with spaces and parentheses in its path, and a cover, reference the space files; both go back as paths', async () => {
    const { admin, org } = await newOrg(h.t, 'Constructs Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('constructs');
    h.g.commit('constructs', repoFiles(), 'GitBook pages');
    const state = await importRepo(admin, space.id, 'constructs');
    assert.equal(state.operation?.state, 'success', state.operation?.error);

    const files = (await h.t.request('GET', `/v1/spaces/${space.id}/content/files`, { token: admin.token })).body.items as { id: string; name: string }[];
    const fileId = (name: string) => files.find((f) => f.name === name)?.id;
    assert.ok(fileId('example (1).pdf') && fileId('hero (1).png'), JSON.stringify(files.map((f) => f.name)));

    const byTitle = new Map(flatten(await pages(admin, space.id)).map((p) => [p.title, p.id]));
    const read = async (title: string) => (await admin.api.spaces.getPageById(space.id, byTitle.get(title)!, { format: 'document' })).data as unknown as { document: { nodes: Node[] }; cover?: unknown; layout: Record<string, unknown> };
    const downloads = await read('Downloads');
    const fileBlocks = all(downloads.document.nodes).filter((n) => n.type === 'file');
    assert.deepEqual(fileBlocks.map((b) => b.data.ref), [
      { kind: 'file', file: fileId('example (1).pdf') },
      { kind: 'file', file: fileId('calibration sheet.pdf') },
    ]);

    const home = await read('Weather station kit');
    assert.deepEqual(home.cover, { ref: { kind: 'file', file: fileId('hero (1).png') }, yPos: 0, height: 380 });
    assert.equal(home.layout.coverSize, 'background');
    assert.equal(home.layout.coverMask, 'radial');
    assert.equal(home.layout.width, 'wide');
    assert.equal(home.layout.metadata, false);

    // The published site shows the cover from the space's files.
    const { data: site } = await admin.api.orgs.createSite(org.id, { title: 'Station' } as never);
    await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: space.id });
    await admin.api.orgs.publishSite(org.id, site.id, {} as never);
    const html = (await h.t.request('GET', `/${org.id}/${site.basename}/`)).body as string;
    assert.match(html, /<img class="cover" src="[^"]*_folio\/files\/[^"]+\/hero%20\(1\)\.png"/);

    // Markdown read through the API: the cover is the file's path again.
    const { data: asMarkdown } = await admin.api.spaces.getPageById(space.id, byTitle.get('Weather station kit')!, { format: 'markdown' });
    assert.match((asMarkdown as { markdown: string }).markdown, /\ncover: \.gitbook\/assets\/hero \(1\)\.png\n/);

    // Edited in Folio, then exported: the front matter is written back as GitBook wrote it.
    const cr = (await admin.api.spaces.createChangeRequest(space.id, { subject: 'Edit' })).data;
    const edited = fixture('README.md').replace('before the first reading.', 'before the first reading, every season.');
    const res = await h.t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, {
      token: admin.token,
      body: { changes: [{ operation: 'update_page', page: byTitle.get('Weather station kit'), document: { markdown: edited } }] },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await admin.api.spaces.mergeChangeRequest(space.id, cr.id);
    assert.deepEqual((await read('Weather station kit')).cover, { ref: { kind: 'file', file: fileId('hero (1).png') }, yPos: 0, height: 380 });
    await exportRepo(admin, space.id, 'constructs', 'Edited in Folio');
    const readme = h.g.files('constructs').get('site/README.md')!.toString();
    assert.match(readme, /every season/);
    const head = (text: string) => /^---\n[\s\S]*?\n---\n/.exec(text)![0];
    const original = head(fixture('README.md'));
    for (const part of ['cover: .gitbook/assets/hero (1).png\ncoverY: 0\ncoverHeight: 380\n', /\nlayout:\n(?: {2}.*\n)+/.exec(original)![0].slice(1)]) {
      assert.ok(head(readme).includes(part), `front matter lost:\n${part}\n---\n${head(readme)}`);
    }
    assert.match(h.g.files('constructs').get('site/guides/files.md')!.toString(), /\{% file src="\.\.\/\.gitbook\/assets\/example%20\(1\)\.pdf" %\}|\{% file src="\.\.\/\.gitbook\/assets\/example \(1\)\.pdf" %\}/);
  });
});
