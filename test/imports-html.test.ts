import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { markdownToDocument } from '../src/content/markdown/markdown.ts';
import { DocxError, docxToHtml } from '../src/imports/docx.ts';
import { readHtmlExport, resolveExportHref } from '../src/imports/html-export.ts';
import { htmlToGitbookMarkdown } from '../src/imports/html.ts';
import { crawlPageKey, crawlWebsite, parseRobots } from '../src/imports/website.ts';

// The import library: HTML → GitBook Markdown (checked through Folio's own Markdown parser, the
// real contract), Word documents, Notion/Confluence exports, and the website crawler against a
// local server on 127.0.0.1 (the only address these tests reach).

type Node = { object: string; type: string; data?: Record<string, unknown>; nodes?: Node[]; fragments?: { fragment: string; nodes: Node[] }[]; leaves?: { text: string }[] };

function blocks(markdown: string): Node[] {
  return markdownToDocument(markdown).nodes as unknown as Node[];
}

function textOf(node: Node): string {
  if (node.object === 'text') return (node.leaves ?? []).map((l) => l.text).join('');
  return [...(node.nodes ?? []), ...(node.fragments ?? []).flatMap((f) => f.nodes)].map(textOf).join('');
}

function tree(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return files;
}

const fixtures = new URL('./fixtures/imports/', import.meta.url).pathname;

const DOCUSAURUS_PAGE = `<!doctype html><html><head><title>Install | My Docs</title><style>body{color:red}</style><script>alert("pwned")</script></head>
<body><nav class="navbar"><a href="/docs/">Home</a></nav>
<main><article>
<nav class="theme-doc-breadcrumbs"><a href="/docs/">Docs</a></nav>
<h1>Install<a class="hash-link" href="#install">#</a></h1>
<p>Run the <code>install</code> command, type &lt;script&gt;alert(1)&lt;/script&gt; literally, and see <a href="../guide/">the guide</a>.</p>
<p>{% hint style="danger" %}</p>
<h2 id="steps">Steps</h2>
<ol><li>First <strong>step</strong></li><li>Second</li></ol>
<h3>Details</h3>
<div class="language-bash codeBlockContainer_x theme-code-block"><div class="codeBlockContent_y"><div class="codeBlockTitle_z">install.sh</div><pre class="prism-code language-bash"><code><span class="token-line"><span class="token plain">npm install folio</span><br></span><span class="token-line"><span class="token plain">npm   start</span><br></span></code></pre><button>Copy</button></div></div>
<pre><code class="language-js">const a = "\`\`\`";
if (a) {
  go();
}</code></pre>
<div class="theme-admonition theme-admonition-warning admonition_a alert alert--warning"><div class="admonitionHeading_b"><span class="admonitionIcon_c"><svg viewBox="0 0 1 1"><path d="M0"/></svg></span>warning</div><div class="admonitionContent_d"><p>Be <em>careful</em>.</p></div></div>
<div class="theme-admonition theme-admonition-tip alert alert--success"><div class="admonitionHeading_b">Pro tip</div><div class="admonitionContent_d"><p>Use a cache.</p></div></div>
<div class="tabs-container"><ul role="tablist" class="tabs"><li role="tab">npm</li><li role="tab">Yarn</li></ul><div class="margin-top--md"><div role="tabpanel"><p>Use npm.</p></div><div role="tabpanel" hidden><p>Use yarn.</p></div></div></div>
<details><summary>More <b>info</b></summary><p>Hidden text.</p></details>
<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a | b</td><td><code>1</code></td></tr><tr><td>c</td><td>2</td></tr></tbody></table>
<p><img src="img/shot.png" alt="Shot"></p>
<figure><img src="/assets/fig.png" alt="Fig"><figcaption>A caption</figcaption></figure>
<iframe src="https://video.example/embed/1"></iframe>
<form action="/search"><input name="q"></form>
<nav class="pagination-nav"><a href="/docs/next">Next</a></nav>
</article></main><footer>Footer text</footer><script>track()</script></body></html>`;

describe('htmlToGitbookMarkdown', () => {
  test('a Docusaurus page becomes GitBook blocks: hints, tabs, code with language and title, expandable, table, images', () => {
    const r = htmlToGitbookMarkdown(DOCUSAURUS_PAGE, { baseUrl: 'https://docs.example/docs/install/', mainContent: true });
    assert.equal(r.title, 'Install');
    assert.deepEqual(r.assets, ['https://docs.example/docs/install/img/shot.png', 'https://docs.example/assets/fig.png']);
    assert.ok(r.warnings.some((w) => /iframe/.test(w)), r.warnings.join('\n'));
    assert.ok(r.warnings.some((w) => /form/.test(w)), r.warnings.join('\n'));
    // The icon's SVG is decoration, not a warning.
    assert.ok(!r.warnings.some((w) => /SVG/.test(w)), r.warnings.join('\n'));
    // Nothing executable or foreign survives: no script, style, chrome.
    for (const bad of ['pwned', 'track()', 'color:red', 'Footer text', 'Next', 'Copy', 'Docs](']) assert.ok(!r.markdown.includes(bad), `${bad} in\n${r.markdown}`);
    assert.ok(!/<script/i.test(r.markdown.replace(/\\</g, '')), r.markdown);

    const doc = blocks(r.markdown);
    assert.deepEqual(
      doc.map((b) => b.type),
      ['paragraph', 'paragraph', 'heading-1', 'list-ordered', 'heading-2', 'code', 'code', 'hint', 'hint', 'tabs', 'expandable', 'table', 'images', 'images'],
      r.markdown,
    );
    // Text that looks like markup stays text.
    assert.match(textOf(doc[0]!), /type <script>alert\(1\)<\/script> literally/);
    assert.equal(textOf(doc[1]!), '{% hint style="danger" %}');
    const link = JSON.stringify(doc[0]);
    assert.match(link, /https:\/\/docs\.example\/docs\/guide\//);
    assert.equal(textOf(doc[2]!), 'Steps');
    assert.equal(doc[2]!.data?.id, 'steps'); // the anchor survives, so #steps links still work
    const [bash, js] = [doc[5]!, doc[6]!];
    assert.equal(bash.data?.syntax, 'bash');
    assert.equal(bash.data?.title, 'install.sh');
    assert.equal(textOf(bash), 'npm install folionpm   start'); // two lines, spaces kept
    assert.equal(bash.nodes?.length, 2);
    assert.equal(js.data?.syntax, 'js');
    assert.equal(js.nodes?.length, 4);
    assert.match(textOf(js), /const a = "```";/);
    assert.equal(doc[7]!.data?.style, 'warning');
    assert.equal(textOf(doc[7]!), 'Be careful.');
    assert.equal(doc[8]!.data?.style, 'success');
    assert.match(textOf(doc[8]!), /^Pro tipUse a cache\.$/);
    const tabs = doc[9]!;
    assert.deepEqual(tabs.nodes?.map((t) => t.data?.title), ['npm', 'Yarn']);
    assert.deepEqual(tabs.nodes?.map(textOf), ['Use npm.', 'Use yarn.']);
    const expandable = doc[10]!;
    assert.equal(textOf({ ...expandable, nodes: [], fragments: expandable.fragments?.filter((f) => f.fragment === 'expandable-title') }), 'More info');
    assert.match(textOf(expandable), /Hidden text\./);
    const table = doc[11]!;
    assert.match(textOf(table), /a \| b/);
    assert.equal(Object.keys((table.data as { records: object }).records).length, 2);
    assert.match(JSON.stringify(doc[12]), /img\/shot\.png/);
    assert.match(JSON.stringify(doc[13]), /A caption/);
  });

  test('rewriteAsset and rewriteLink name the files and pages of the import', () => {
    const r = htmlToGitbookMarkdown('<p><a href="/docs/a">A</a> <img src="x.png" alt="x"></p>', {
      baseUrl: 'https://docs.example/docs/',
      rewriteAsset: (src) => `.gitbook/assets/${src.split('/').pop()}`,
      rewriteLink: (href) => (href === 'https://docs.example/docs/a' ? 'a.md' : href),
    });
    assert.match(r.markdown, /\[A\]\(a\.md\)/);
    assert.match(r.markdown, /!\[x\]\(\.gitbook\/assets\/x\.png\)/);
    assert.deepEqual(r.assets, ['https://docs.example/docs/x.png']);
  });

  test('links that would run code are dropped, their text kept; raw HTML never leaks', () => {
    const r = htmlToGitbookMarkdown('<p><a href="javascript:alert(1)">click</a> <a href="#x" onclick="evil()">ok</a> <img src="javascript:alert(2)"> <img src="data:image/png;base64,AAAA"></p><p>&lt;img src=x onerror=alert(3)&gt;</p>', {});
    assert.ok(!/javascript:|onclick|evil|<img/.test(r.markdown.replace(/\\</g, '')), r.markdown);
    assert.ok(r.warnings.some((w) => /data: URL/.test(w)), r.warnings.join('\n'));
    const doc = blocks(r.markdown);
    assert.equal(textOf(doc[0]!).trim(), 'click ok');
    assert.equal(textOf(doc[1]!), '<img src=x onerror=alert(3)>');
  });

  test('line breaks survive in paragraphs and table cells; code stays a block inside a list item', () => {
    const r = htmlToGitbookMarkdown('<p>line one<br>line two</p><table><tr><th>a</th></tr><tr><td>x<br>y</td></tr></table><ul><li><p>item</p><pre><code class="language-py">x = 1</code></pre></li></ul>', {});
    const doc = blocks(r.markdown);
    assert.deepEqual(doc.map((b) => b.type), ['paragraph', 'table', 'list-unordered'], r.markdown);
    assert.equal(textOf(doc[0]!), 'line one\nline two');
    assert.equal(textOf(doc[1]!), 'x\ny');
    assert.match(JSON.stringify(doc[2]), /"type":"code","key":"[^"]+","data":\{"syntax":"py"/);
  });

  test('a Material for MkDocs page: admonitions, collapsible blocks, content tabs, titled and numbered code', () => {
    const html = `<html><head><title>Setup - Project</title></head><body><header class="md-header">Header</header><div class="md-container"><nav class="md-nav"><a href="/">Home</a></nav>
<article class="md-content__inner md-typeset">
<a href="edit" title="Edit this page" class="md-content__button md-icon">edit</a>
<h1 id="setup">Setup<a class="headerlink" href="#setup" title="Permanent link">¶</a></h1>
<div class="admonition note"><p class="admonition-title">Note</p><p>Plain note.</p></div>
<div class="admonition danger"><p class="admonition-title">Do not</p><p>Run as root.</p></div>
<details class="tip"><summary>Collapsed tip</summary><p>Shown on click.</p></details>
<div class="tabbed-set tabbed-alternate" data-tabs="1:2"><input checked="checked" id="__tabbed_1_1" name="__tabbed_1" type="radio"><input id="__tabbed_1_2" name="__tabbed_1" type="radio"><div class="tabbed-labels"><label for="__tabbed_1_1">C</label><label for="__tabbed_1_2">C++</label></div><div class="tabbed-content"><div class="tabbed-block"><p>C text.</p></div><div class="tabbed-block"><p>C++ text.</p></div></div></div>
<div class="language-python highlight"><span class="filename">bubble_sort.py</span><pre><span></span><code><span class="k">def</span> <span class="nf">sort</span><span class="p">(</span><span class="n">items</span><span class="p">):</span>
    <span class="k">pass</span>
</code></pre></div>
<div class="language-yaml highlight"><table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre><span></span><span class="normal">1</span>
<span class="normal">2</span></pre></div></td><td class="code"><div><pre><span></span><code><span class="nt">a</span><span class="p">:</span> 1
<span class="nt">b</span><span class="p">:</span> 2
</code></pre></div></td></tr></table></div>
</article></div><footer class="md-footer">Made with Material</footer></body></html>`;
    const r = htmlToGitbookMarkdown(html, { mainContent: true });
    assert.equal(r.title, 'Setup');
    const doc = blocks(r.markdown);
    assert.deepEqual(doc.map((b) => b.type), ['hint', 'hint', 'expandable', 'tabs', 'code', 'code'], r.markdown);
    assert.equal(doc[0]!.data?.style, 'info');
    assert.equal(textOf(doc[0]!), 'Plain note.'); // the kind's own name is not repeated
    assert.equal(doc[1]!.data?.style, 'danger');
    assert.equal(textOf(doc[1]!), 'Do notRun as root.');
    assert.match(textOf(doc[2]!), /Collapsed tip/);
    assert.deepEqual(doc[3]!.nodes?.map((t) => t.data?.title), ['C', 'C++']);
    assert.equal(doc[4]!.data?.syntax, 'python');
    assert.equal(doc[4]!.data?.title, 'bubble_sort.py');
    assert.equal(doc[4]!.nodes?.length, 2);
    assert.equal(doc[5]!.data?.syntax, 'yaml');
    assert.equal(textOf(doc[5]!), 'a: 1b: 2'); // line numbers left out
    for (const chrome of ['Made with Material', 'Header', 'Edit this page', '¶']) assert.ok(!r.markdown.includes(chrome), r.markdown);
  });

  test('without <main> or <article>, Readability picks the content out of the page', () => {
    const para = (n: number) => `<p>Paragraph ${n} of the article, long enough to count as prose for a reader view, with commas, words, and more words in it.</p>`;
    const html = `<html><head><title>Long read</title></head><body><div id="sidebar"><ul><li><a href="/a">Sidebar link A</a></li><li><a href="/b">Sidebar link B</a></li></ul></div>
<div id="story"><h1>Long read</h1>${[1, 2, 3, 4, 5, 6].map(para).join('')}</div><div class="comments">Comment box</div></body></html>`;
    const r = htmlToGitbookMarkdown(html, { mainContent: true });
    assert.equal(r.title, 'Long read');
    assert.match(r.markdown, /Paragraph 1 of the article/);
    assert.match(r.markdown, /Paragraph 6 of the article/);
    assert.ok(!r.markdown.includes('Sidebar link'), r.markdown);
    // Without mainContent, the whole body is converted.
    assert.match(htmlToGitbookMarkdown(html, {}).markdown, /Sidebar link A/);
  });

  test('Notion and Confluence callouts and toggles', () => {
    const notion = htmlToGitbookMarkdown(
      `<figure class="block-color-yellow_background callout"><div><span class="icon">⚠️</span></div><div><p>Heads up.</p></div></figure><aside><p>An aside.</p></aside><ul class="toggle"><li><details open=""><summary>Toggle</summary><p>Inside.</p></details></li></ul>`,
      {},
    );
    const doc = blocks(notion.markdown);
    assert.deepEqual(doc.map((b) => [b.type, b.data?.style]), [['hint', 'warning'], ['hint', 'info'], ['expandable', undefined]], notion.markdown);
    assert.equal(textOf(doc[0]!), 'Heads up.');
    assert.equal(doc[2]!.data?.defaultExpanded, true);
    const confluence = htmlToGitbookMarkdown(
      ['information', 'tip', 'note', 'warning'].map((k) => `<div class="confluence-information-macro confluence-information-macro-${k}"><span class="aui-icon confluence-information-macro-icon"></span><div class="confluence-information-macro-body"><p>${k}</p></div></div>`).join(''),
      {},
    );
    assert.deepEqual(blocks(confluence.markdown).map((b) => b.data?.style), ['info', 'success', 'warning', 'danger'], confluence.markdown);
  });
});

// --- Word ------------------------------------------------------------------------------------

/** A zip archive of stored (uncompressed) entries: enough for a small .docx. */
function zip(entries: Record<string, Buffer | string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(entries)) {
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(entries).length, 8);
  end.writeUInt16LE(Object.keys(entries).length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

function sampleDocx(): Buffer {
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  const drawing = `<w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:extent cx="9525" cy="9525"/><wp:docPr id="1" name="Picture 1" descr="A diagram"/><a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="0" name="d.png" descr="A diagram"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="rIdImg"/></pic:blipFill><pic:spPr/></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>`;
  const p = (style: string, text: string) => `<w:p><w:pPr><w:pStyle w:val="${style}"/></w:pPr><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
  const document = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W}><w:body>
${p('Title', 'Release notes')}
${p('Heading1', 'Highlights')}
<w:p><w:r><w:t xml:space="preserve">Faster </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>search</w:t></w:r><w:r><w:t>.</w:t></w:r></w:p>
${p('Code', 'folio upgrade --to 2')}
<w:p><w:r>${drawing}</w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Area</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Change</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>Search</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Faster</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
${p('MysteryStyle', 'Styled oddly')}
</w:body></w:document>`;
  const styles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles ${W}>
<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>
<w:style w:type="paragraph" w:styleId="Code"><w:name w:val="Code"/></w:style>
<w:style w:type="paragraph" w:styleId="MysteryStyle"><w:name w:val="Mystery Style"/></w:style>
</w:styles>`;
  return zip({
    '[Content_Types].xml': `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`,
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
    'word/_rels/document.xml.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdStyles" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/></Relationships>`,
    'word/document.xml': document,
    'word/styles.xml': styles,
    'word/media/image1.png': PNG,
  });
}

describe('docxToHtml', () => {
  test('a Word document: headings, bold, code style, a table and an image as a separate file; unknown styles are warnings', async () => {
    const { html, images, warnings } = await docxToHtml(sampleDocx());
    assert.equal(images.length, 1);
    assert.equal(images[0]!.contentType, 'image/png');
    assert.deepEqual(images[0]!.bytes, PNG);
    assert.match(images[0]!.name, /^image-1-[0-9a-f]{8}\.png$/);
    assert.ok(html.includes(`src="${images[0]!.name}"`), html);
    assert.ok(!html.includes('data:'), html);
    assert.ok(warnings.some((w) => /Mystery Style/.test(w)), warnings.join('\n'));

    const r = htmlToGitbookMarkdown(html, { rewriteAsset: (src) => `.gitbook/assets/${src}` });
    assert.equal(r.title, 'Release notes');
    assert.deepEqual(r.assets, [images[0]!.name]);
    const doc = blocks(r.markdown);
    assert.deepEqual(doc.map((b) => b.type), ['heading-1', 'paragraph', 'code', 'images', 'table', 'paragraph'], r.markdown);
    assert.match(JSON.stringify(doc[1]), /"bold"/);
    assert.equal(textOf(doc[2]!), 'folio upgrade --to 2');
    assert.match(r.markdown, new RegExp(`\\.gitbook/assets/${images[0]!.name.replace('.', '\\.')}`));
  });

  test('a file that is not a Word document is refused with a clear error', async () => {
    await assert.rejects(docxToHtml(Buffer.from('<html>not a docx</html>')), (err: Error) => err instanceof DocxError && /not a zip/.test(err.message));
    await assert.rejects(docxToHtml(zip({ 'hello.txt': 'hi' })), (err: Error) => err instanceof DocxError && /could not be read/.test(err.message));
    // A zip bomb is refused from the sizes its directory declares, before anything is inflated.
    const docx = sampleDocx();
    await assert.rejects(docxToHtml(docx, { maxUncompressedBytes: 1000 }), (err: Error) => err instanceof DocxError && /unpacks to more than 1000 bytes/.test(err.message));
    await assert.rejects(docxToHtml(docx, { maxEntries: 3 }), (err: Error) => err instanceof DocxError && /holds 6 files/.test(err.message));
  });
});

// --- exports ---------------------------------------------------------------------------------

describe('readHtmlExport', () => {
  test('a Notion export: pages nested by folder, children in the order the parent links to them', () => {
    const r = readHtmlExport(tree(join(fixtures, 'notion')))!;
    assert.equal(r.kind, 'notion');
    assert.deepEqual(
      r.pages.map((p) => [p.path.join('/'), p.title]),
      [
        ['handbook', 'Handbook'],
        ['handbook/onboarding', 'Onboarding'],
        ['handbook/benefits', 'Benefits'],
      ],
    );
    const handbook = htmlToGitbookMarkdown(r.pages[0]!.html, { mainContent: true });
    assert.equal(handbook.title, 'Handbook');
    assert.deepEqual(handbook.assets, ['Handbook 8a3f2c1e9b7d4e6fa1c2d3e4f5a6b7c8/team.png']);
    const types = blocks(handbook.markdown).map((b) => b.type);
    assert.deepEqual(types, ['paragraph', 'hint', 'paragraph', 'paragraph', 'expandable', 'images'], handbook.markdown);
    assert.ok(!handbook.markdown.includes('🚀'), handbook.markdown);
    const onboarding = htmlToGitbookMarkdown(r.pages[1]!.html, { mainContent: true });
    const doc = blocks(onboarding.markdown);
    assert.deepEqual(doc.map((b) => b.type), ['heading-1', 'list-ordered', 'code', 'hint', 'table'], onboarding.markdown);
    assert.equal(doc[1]!.nodes?.length, 2);
    assert.equal(doc[2]!.data?.syntax, 'shell');
    assert.equal(doc[3]!.data?.style, 'danger');
    // The page's properties table (in its header) is not content.
    assert.ok(!onboarding.markdown.includes('Owner'), onboarding.markdown);
  });

  test('a Confluence export: the page tree of index.html, titles without the space name, no attachments section', () => {
    const r = readHtmlExport(tree(join(fixtures, 'confluence')))!;
    assert.equal(r.kind, 'confluence');
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(
      r.pages.map((p) => [p.path.join('/'), p.title, p.sourcePath]),
      [
        ['home', 'Home', 'DOCS/Home_65538.html'],
        ['home/getting-started', 'Getting Started', 'DOCS/Getting-Started_65541.html'],
        ['home/getting-started/installation', 'Installation', 'DOCS/Installation_65545.html'],
        ['home/faq', 'FAQ', 'DOCS/FAQ_65543.html'],
      ],
    );
    const home = htmlToGitbookMarkdown(r.pages[0]!.html, { mainContent: true });
    assert.equal(home.title, 'Home');
    assert.deepEqual(blocks(home.markdown).map((b) => [b.type, b.data?.style]), [['paragraph', undefined], ['hint', 'info'], ['images', undefined]], home.markdown);
    assert.ok(!home.markdown.includes('Attachments') && !home.markdown.includes('Created by'), home.markdown);
    const started = blocks(htmlToGitbookMarkdown(r.pages[1]!.html, { mainContent: true }).markdown);
    assert.deepEqual(started.map((b) => b.type), ['heading-1', 'paragraph', 'hint']);
    assert.equal(started[2]!.data?.style, 'danger');
    assert.equal(textOf(started[2]!), 'CarefulBack up first.');
    const install = blocks(htmlToGitbookMarkdown(r.pages[2]!.html, { mainContent: true }).markdown);
    assert.deepEqual(install.map((b) => [b.type, b.data?.syntax]), [['paragraph', undefined], ['code', 'bash'], ['table', undefined]]);
  });

  test('a plain folder of HTML files; no HTML at all is not an export', () => {
    const r = readHtmlExport(
      new Map([
        ['site/index.html', Buffer.from('<h1>Home</h1>')],
        ['site/guide/index.html', Buffer.from('<title>Guide</title><p>g</p>')],
        ['site/guide/b.html', Buffer.from('<h1>Bee</h1>')],
        ['site/about.html', Buffer.from('<h1>About</h1>')],
        ['site/style.css', Buffer.from('x')],
      ]),
    )!;
    assert.equal(r.kind, 'html');
    // site/index.html is the folder's page; guide/index.html the page of guide, b.html its child.
    assert.deepEqual(
      r.pages.map((p) => [p.path.join('/'), p.title, p.sourcePath]),
      [
        ['home', 'Home', 'site/index.html'],
        ['home/about', 'About', 'site/about.html'],
        ['home/guide', 'Guide', 'site/guide/index.html'],
        ['home/guide/bee', 'Bee', 'site/guide/b.html'],
      ],
    );
    assert.deepEqual(resolveExportHref('site/guide/b.html', '../about.html#team'), { path: 'site/about.html', anchor: 'team' });
    assert.deepEqual(resolveExportHref('N/Handbook 1.html', 'Handbook%201/Child%202.html'), { path: 'N/Handbook 1/Child 2.html' });
    assert.equal(resolveExportHref('a.html', 'https://example.com/'), undefined);
    assert.equal(resolveExportHref('a.html', '../../etc/passwd'), undefined);
    assert.equal(readHtmlExport(new Map([['a.md', Buffer.from('# A')]])), null);
  });
});

// --- website ---------------------------------------------------------------------------------

describe('parseRobots', () => {
  test('the Folio group wins over *, the longest rule wins, Allow on a tie, * and $ patterns', () => {
    const robots = parseRobots('User-agent: *\nDisallow: /\n\nUser-agent: Folio\nUser-agent: other\nDisallow: /docs/private/\nAllow: /docs/private/open\nDisallow: /*.pdf$\nSitemap: https://x.example/s.xml\n');
    assert.equal(robots.allowed('/docs/'), true);
    assert.equal(robots.allowed('/docs/private/x'), false);
    assert.equal(robots.allowed('/docs/private/open'), true);
    assert.equal(robots.allowed('/docs/a.pdf'), false);
    assert.equal(robots.allowed('/docs/a.pdf.html'), true);
    assert.deepEqual(robots.sitemaps, ['https://x.example/s.xml']);
    assert.equal(parseRobots('User-agent: *\nDisallow: /\n').allowed('/docs/'), false);
    assert.equal(parseRobots('User-agent: *\nDisallow:\n').allowed('/docs/'), true);
  });
});

interface Site {
  server: Server;
  base: string;
  requests: string[];
}

function page(title: string, body: string): string {
  const nav = `<nav class="sidebar"><ul>
<li><a href="/docs/">Introduction</a></li>
<li><a href="/docs/install">Install</a></li>
<li><a href="/docs/guide/">Guide</a><ul><li><a href="/docs/guide/setup#top">Setup</a></li><li><a href="guide/../guide/usage?ref=nav">Usage</a></li></ul></li>
<li><a href="/docs/private/secret">Secret</a></li>
<li><a href="/docs/moved">Moved</a></li>
<li><a href="/docs/logo.png">Logo</a></li>
<li><a href="/blog/">Blog</a></li>
<li><a href="http://other.example/docs/">Elsewhere</a></li>
</ul></nav>`;
  return `<!doctype html><html><head><title>${title} | Site</title></head><body>${nav}<main><article><h1>${title}</h1>${body}</article></main></body></html>`;
}

async function startSite(handler?: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<Site> {
  const requests: string[] = [];
  const pages: Record<string, string> = {
    '/docs/': page('Introduction', '<p>Welcome.</p>'),
    '/docs/install': page('Install', '<p>Install it.</p>'),
    '/docs/guide/': page('Guide', '<p>Guide index.</p>'),
    '/docs/guide/setup': page('Setup', '<p>Set up.</p>'),
    '/docs/guide/usage': page('Usage', '<p>Use it.</p>'),
    '/docs/private/secret': page('Secret', '<p>Hidden.</p>'),
    '/docs/only-in-sitemap': page('Sitemap only', '<p>Found through the sitemap.</p>'),
    '/blog/': page('Blog', '<p>Out of scope.</p>'),
  };
  let base = '';
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (handler?.(req, res)) return;
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end(`User-agent: *\nDisallow: /\n\nUser-agent: Folio\nDisallow: /docs/private/\nSitemap: ${base}/docs-sitemap.xml\n`);
    }
    if (path === '/docs-sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      return res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${base}/docs/install</loc></url><url><loc>${base}/docs/only-in-sitemap</loc></url><url><loc>${base}/blog/post</loc></url></urlset>`);
    }
    if (path === '/docs/moved') {
      // A redirect to the cloud metadata address: the vetted fetch must refuse to follow it.
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      return res.end();
    }
    const html = pages[path];
    if (!html) {
      res.writeHead(404);
      return res.end('not found');
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, base, requests };
}

function stopSite(site: Site) {
  site.server.closeAllConnections();
  site.server.close();
}

/** The test server is on loopback: only it is allowed, every other private address stays refused. */
const reach = { fetchAllowPrivate: false, fetchAllowCidrs: ['127.0.0.1/32'] };

describe('crawlWebsite', () => {
  let site: Site;
  before(async () => {
    site = await startSite();
  });
  after(() => stopSite(site));

  test('crawls the pages under the start path in navigation order, then the sitemap; robots.txt, scope and private redirects respected', async () => {
    const progress: number[] = [];
    const r = await crawlWebsite(`${site.base}/docs/`, { maxPages: 50, maxBytes: 10_000_000, timeoutMs: 20_000, reach, onProgress: (n) => progress.push(n) });
    assert.deepEqual(
      r.pages.map((p) => [p.path.join('/'), p.title]),
      [
        ['', 'Introduction'],
        ['install', 'Install'],
        ['guide', 'Guide'],
        ['guide/setup', 'Setup'],
        ['guide/usage', 'Usage'],
        ['only-in-sitemap', 'Sitemap only'],
      ],
    );
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6]);
    // Parallel fetches do not change the order: one at a time gives the same pages.
    const serial = await crawlWebsite(`${site.base}/docs/`, { maxPages: 50, maxBytes: 10_000_000, timeoutMs: 20_000, reach, concurrency: 1 });
    assert.deepEqual(serial.pages.map((p) => p.url), r.pages.map((p) => p.url));
    assert.equal(r.pages[4]!.url, `${site.base}/docs/guide/usage`);
    // Links find their page by key, whatever their trailing slash, index file, query or fragment.
    assert.equal(crawlPageKey(`${site.base}/docs/guide/index.html?x=1#y`), crawlPageKey(r.pages[2]!.url));
    assert.match(r.pages[0]!.html, /Welcome\./);
    // Never fetched: the disallowed page, out-of-scope pages, the image, the other host.
    for (const path of ['/docs/private/secret', '/blog/', '/blog/post', '/docs/logo.png']) assert.ok(!site.requests.includes(path), `${path} was fetched`);
    assert.ok(r.warnings.some((w) => /robots\.txt disallows/.test(w)), r.warnings.join('\n'));
    // The redirect to 169.254.169.254 was refused by the vetted fetch, and named.
    assert.ok(site.requests.includes('/docs/moved'));
    assert.ok(r.warnings.some((w) => w.includes('/docs/moved') && /169\.254\.169\.254 is a private address/.test(w)), r.warnings.join('\n'));
    // The crawled pages convert through the main-content extraction without the navigation.
    const md = htmlToGitbookMarkdown(r.pages[1]!.html, { baseUrl: r.pages[1]!.url, mainContent: true });
    assert.equal(md.title, 'Install');
    assert.equal(md.markdown, 'Install it.\n');
  });

  test('stops at the page limit and at the byte limit, with a warning', async () => {
    const few = await crawlWebsite(`${site.base}/docs/`, { maxPages: 2, maxBytes: 10_000_000, timeoutMs: 20_000, reach });
    assert.deepEqual(few.pages.map((p) => p.title), ['Introduction', 'Install']);
    assert.ok(few.warnings.some((w) => /more pages than the 2/.test(w)), few.warnings.join('\n'));
    const small = await crawlWebsite(`${site.base}/docs/`, { maxPages: 50, maxBytes: 2500, timeoutMs: 20_000, reach });
    assert.ok(small.pages.length >= 1 && small.pages.length < 6, String(small.pages.length));
    assert.ok(small.warnings.some((w) => /2500 bytes/.test(w)), small.warnings.join('\n'));
  });

  test('refuses a private start address unless the configuration allows it', async () => {
    await assert.rejects(
      crawlWebsite(`${site.base}/docs/`, { maxPages: 5, maxBytes: 1_000_000, timeoutMs: 5_000 }),
      (err: Error) => /127\.0\.0\.1 is a private address/.test(err.message),
    );
    await assert.rejects(crawlWebsite('ftp://example.com/', { maxPages: 5, maxBytes: 1000, timeoutMs: 1000 }), /only http\(s\)/);
  });

  test('cancel: the signal stops the crawl and rejects with its reason', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the user');
    await assert.rejects(
      crawlWebsite(`${site.base}/docs/`, {
        maxPages: 50,
        maxBytes: 10_000_000,
        timeoutMs: 20_000,
        reach,
        signal: controller.signal,
        onProgress: (n) => {
          if (n === 2) controller.abort(reason);
        },
      }),
      (err) => err === reason,
    );
  });

  test('the time limit returns the pages read so far, with a warning', async () => {
    const slow = await startSite((req, res) => {
      if (req.url === '/docs/install') {
        setTimeout(() => {
          if (!res.writableEnded) res.end();
        }, 5_000);
        return true;
      }
      return false;
    });
    try {
      const started = Date.now();
      const r = await crawlWebsite(`${slow.base}/docs/`, { maxPages: 50, maxBytes: 10_000_000, timeoutMs: 800, reach });
      assert.ok(Date.now() - started < 4_000);
      assert.deepEqual(r.pages.map((p) => p.title), ['Introduction']);
      assert.ok(r.warnings.some((w) => /800 ms/.test(w)), r.warnings.join('\n'));
    } finally {
      stopSite(slow);
    }
  });
});
