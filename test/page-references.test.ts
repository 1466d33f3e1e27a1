import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { mergePages, newOrg, newSpace } from './support/factories.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/**
 * Links between pages and to files, written as GitBook's markdown writes them: they become content
 * references (kind page, anchor, file) in the document, come back as written in markdown, and stay
 * right when their targets move or are renamed.
 */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');

/** Every content reference in a document, in order. */
function refs(node: any, out: any[] = []): any[] {
  if (node?.data?.ref) out.push(node.data.ref);
  for (const child of node?.nodes ?? []) refs(child, out);
  return out;
}

const INTRO = `# Intro

Read [the setup](guides/setup.md#install) first, then [the guides](guides/README.md).

![Diagram](.gitbook/assets/diagram.png)

{% content-ref url="guides/setup.md" %}
[setup.md](guides/setup.md)
{% endcontent-ref %}

{% file src=".gitbook/assets/diagram.png" %}
The diagram.
{% endfile %}

\`\`\`
[not a link](guides/setup.md)
\`\`\`

Inline \`[code](guides/setup.md)\` and [a missing page](nowhere.md) stay as they are.
`;

const SETUP = `# Setup

Back to [the intro](../intro.md), see ![the diagram](../.gitbook/assets/diagram.png).
`;

test('relative links become page and file references that survive moves and renames', async () => {
  const { admin, org } = await newOrg(t);
  const space = await newSpace(admin, org.id, 'Docs');
  const body = await mergePages(t, admin, space.id, [
    { operation: 'insert_files', files: [{ name: 'diagram.png', contentType: 'image/png', base64: PNG }] },
    // The intro links to pages inserted after it in the same batch.
    { operation: 'insert_page', document: { markdown: INTRO } },
    { operation: 'insert_page', ref: 'guides', title: 'Guides', document: { markdown: 'All guides.\n' } },
    { operation: 'insert_page', into: 'guides', document: { markdown: SETUP } },
  ]);
  const [intro, guides, setup] = body.changes.map((c: any) => c.page.id as string);
  const file = body.insertedFiles[0].id as string;

  const { data: doc } = await admin.api.spaces.getPageById(space.id, intro, { format: 'document' });
  assert.ok('document' in doc && doc.document);
  assert.deepEqual(refs(doc.document), [
    { kind: 'anchor', anchor: 'install', page: setup },
    { kind: 'page', page: guides },
    { kind: 'file', file },
    { kind: 'page', page: setup },
    { kind: 'file', file },
    { kind: 'url', url: 'nowhere.md' },
  ]);
  const { data: nested } = await admin.api.spaces.getPageById(space.id, setup, { format: 'document' });
  assert.ok('document' in nested && nested.document);
  assert.deepEqual(refs(nested.document), [{ kind: 'page', page: intro }, { kind: 'file', file }]);

  // Markdown comes back as it was written (the title comes back as the page's title field).
  const markdownOf = async (pageId: string, query: Record<string, string> = {}) => {
    const res = await t.request('GET', `/v1/spaces/${space.id}/content/page/${pageId}?${new URLSearchParams({ format: 'markdown', ...query })}`, { token: admin.token });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.markdown as string;
  };
  assert.equal(await markdownOf(intro), INTRO.replace('# Intro\n\n', ''));
  assert.equal(await markdownOf(setup), SETUP.replace('# Setup\n\n', ''));
  // Stable references name the targets by id.
  assert.match(await markdownOf(intro, { 'format.markdown.refs': 'stable' }), new RegExp(`\\[the setup\\]\\(/pages/${setup}#install\\)`));

  // Move the setup page to the top level and rename it: links follow it, both ways.
  await mergePages(t, admin, space.id, [{ operation: 'update_page', page: setup, into: null, title: 'Installing' }]);
  const moved = await markdownOf(intro);
  assert.match(moved, /\[the setup\]\(installing\.md#install\)/);
  assert.match(moved, /\{% content-ref url="installing\.md" %\}\n\[setup\.md\]\(installing\.md\)/);
  assert.match(moved, /```\n\[not a link\]\(guides\/setup\.md\)\n```/);
  // Guides has no child any more: its file is guides.md.
  assert.match(moved, /\[the guides\]\(guides\.md\)/);
  const setupNow = await markdownOf(setup);
  assert.match(setupNow, /\[the intro\]\(intro\.md\)/);
  assert.match(setupNow, /!\[the diagram\]\(\.gitbook\/assets\/diagram\.png\)/);
});
