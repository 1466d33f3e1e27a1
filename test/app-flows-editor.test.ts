/**
 * The app's editor flows (issue #25, "Done when"), as a writer does them in the browser: blocks
 * inserted with the `/` menu (a hint, a code block with its title, tabs), read back through the
 * API; and nothing typed lost when the session ends mid-edit. The other flows are in
 * test/app-flows.test.ts (a file of its own: the two run side by side).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { expectNoA11yViolations, screenshot, useAppBrowser } from './support/app-browser.ts';
import { spaceWithPages } from './support/app-flows.ts';
import { addMember } from './support/factories.ts';
import type { TestUser } from './support/server.ts';
import { eventually } from './support/wait.ts';

const app = useAppBrowser();

/** A GitBook document node as the API answers it (format=document). */
interface DocNode {
  object: string;
  type?: string;
  data?: Record<string, unknown>;
  nodes?: DocNode[];
  leaves?: { text: string }[];
}

/** The text of a node and of everything in it. */
function textOf(node: DocNode): string {
  if (node.leaves) return node.leaves.map((l) => l.text).join('');
  return (node.nodes ?? []).map(textOf).join(node.object === 'document' || node.type === 'tabs' || node.type === 'code' ? '\n' : '');
}

/** The page's document in the change request, as the API reads it. */
async function documentOf(user: TestUser, spaceId: string, crId: string, pageId: string): Promise<DocNode> {
  const { data } = await user.api.spaces.getPageInChangeRequestById(spaceId, crId, pageId, { format: 'document' });
  return (data as { document: DocNode }).document;
}

/** The change request the app is editing in (/app/s/:space/~/changes/:number/…), read through the API. */
async function currentChangeRequest(user: TestUser, page: Page, spaceId: string) {
  const match = /\/~\/changes\/(\d+)\//.exec(new URL(page.url()).pathname);
  assert.ok(match, `the app is in a change request (on ${page.url()})`);
  return (await user.api.spaces.getChangeRequestById(spaceId, match[1]!)).data;
}

/**
 * Types as a person does, a key at a time with a short pause: with every key at once, on a loaded
 * machine, the first key in a fresh paragraph was once seen to land after the rest
 * ("yped while signed in.T").
 */
async function write(page: Page, text: string) {
  await page.keyboard.type(text, { delay: 15 });
}

/**
 * Where the caret is, as the browser shows it and as the editor itself holds it: the text of the
 * paragraph each one is in, and whether the editor's caret is at that paragraph's end.
 *
 * The two differ for a moment after a click or an End key: ProseMirror reads the browser's
 * selection when Chrome's "selectionchange" event reaches it, and a key pressed before that acts on
 * the old place. On a loaded machine this once split a paragraph inside the hint typed just before
 * (`<p>Mind the gap.</p><p>/code</p>`) although the browser showed the caret in "Intro.".
 */
function caretOf(page: Page) {
  return page.evaluate(() => {
    const node = window.getSelection()?.anchorNode;
    const element = node instanceof Element ? node : node?.parentElement;
    const shown = element?.closest('p')?.textContent ?? null;
    type Held = { state: { selection: { $from: { parent: { textContent: string; content: { size: number } }; parentOffset: number } } } };
    const held = (document.querySelector('.ProseMirror') as (Element & { editor?: Held }) | null)?.editor?.state.selection.$from;
    return { shown, held: held?.parent.textContent ?? null, heldAtEnd: held ? held.parentOffset === held.parent.content.size : false };
  });
}

/** Puts the cursor at the end of the paragraph showing `text` and opens a new paragraph after it. */
async function newParagraphAfter(editor: Locator, text: string) {
  const page = editor.page();
  // Clicked until the caret is at that paragraph's end in the editor's own state: on a loaded
  // machine a click was seen not to move it (the caret stayed where the last words were typed; see
  // the closing note of issue 26), and the editor can lag the browser (see caretOf).
  await eventually(async () => {
    let caret = await caretOf(page);
    if (caret.shown !== text) await editor.getByText(text, { exact: true }).click();
    if (caret.shown !== text || !caret.heldAtEnd) {
      await page.keyboard.press('End'); // harmless when already there
      caret = await caretOf(page);
    }
    assert.deepEqual(caret, { shown: text, held: text, heldAtEnd: true });
  });
  await page.keyboard.press('Enter');
}

/** Types `/query` and picks the highlighted block of the `/` menu with Enter, after checking it is `name`. */
async function insertBlock(page: Page, query: string, name: string) {
  const menu = page.getByRole('listbox', { name: 'Insert block' });
  // As a person does: "/", the menu opens, then the name. (Typed at machine speed on a loaded
  // machine, the character after "/" once landed before it: see the closing note of issue 25.)
  // The caret must be in the new, empty paragraph before "/" (it opens the menu only there), for
  // the browser and for the editor alike.
  await eventually(async () => assert.deepEqual(await caretOf(page), { shown: '', held: '', heldAtEnd: true }));
  await write(page, '/');
  await menu.waitFor();
  await write(page, query);
  await menu
    .getByRole('option', { name, selected: true })
    .waitFor({ timeout: 5_000 })
    .catch(async (err: Error) => {
      const html = await page.locator('.gb-editor').first().innerHTML();
      throw new Error(`the "/" menu did not offer ${name} for "/${query}": ${err.message}\nthe editor: ${html}`);
    });
  await page.keyboard.press('Enter');
  await menu.waitFor({ state: 'detached' });
}

/** Opens the space's first page, then "Edit": a change request is opened and the page is in the editor. */
async function editFirstPage(page: Page, title: string): Promise<Locator> {
  await page.getByRole('heading', { name: title, level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByRole('region', { name: 'Change request' }).waitFor();
  const editor = page.getByRole('textbox', { name: `Content of ${title}` });
  await editor.waitFor();
  return editor;
}

/**
 * A writer signed in with a space of one page (`title`, holding `markdown`), its first page open in
 * the editor, in the change request "Edit" opened.
 */
async function writerInEditor(name: string, org: string, title: string, markdown: string) {
  const owner = await app.userWithPassword(name);
  const { space, pageIds } = await spaceWithPages(app.t, owner, [{ title, markdown }], { org });
  const { page } = await app.signedInPage(owner, { via: 'api', path: `/app/s/${space.id}/` });
  const editor = await editFirstPage(page, title);
  const cr = await currentChangeRequest(owner, page, space.id);
  return { owner, space, pageIds, page, editor, cr };
}

test('writing with "/": a hint, a code block with a title, tabs; the API reads those blocks', async () => {
  const { owner, space, pageIds, page, editor, cr } = await writerInEditor('Wanda Writer', 'Writers Inc', 'Install guide', 'Intro.\n');

  // Blocks go in after "Intro.", each one right after it: they end up in the reverse order.
  await newParagraphAfter(editor, 'Intro.');
  await insertBlock(page, 'hint', 'Hint');
  await write(page, 'Mind the gap.');
  await editor.getByRole('note', { name: 'Info hint' }).getByText('Mind the gap.').waitFor();

  await newParagraphAfter(editor, 'Intro.');
  await insertBlock(page, 'code', 'Code block');
  await write(page, 'npm install folio');
  const code = editor.getByRole('group', { name: 'Code block' });
  await code.getByLabel('Code title').fill('Install');

  await newParagraphAfter(editor, 'Intro.');
  await insertBlock(page, 'tabs', 'Tabs');
  const tabTitles = editor.getByLabel('Tab title');
  await eventually(async () => assert.deepEqual(await tabTitles.evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value)), ['First tab', 'Second tab']));
  await tabTitles.first().fill('macOS');
  await editor.locator('.gb-tab-body').first().click();
  await write(page, 'brew install folio');

  await eventually(
    async () => {
      const doc = await documentOf(owner, space.id, cr.id, pageIds[0]!);
      const nodes = doc.nodes ?? [];
      assert.deepEqual(nodes.map((n) => n.type), ['paragraph', 'tabs', 'code', 'hint', 'paragraph'].slice(0, nodes.length));
      const [, tabs, codeBlock, hint] = nodes;
      assert.equal(hint?.type, 'hint');
      assert.equal(hint.data?.style, 'info');
      assert.equal(textOf(hint), 'Mind the gap.');
      assert.equal(codeBlock?.type, 'code');
      assert.equal(codeBlock.data?.title, 'Install');
      assert.equal(textOf(codeBlock), 'npm install folio');
      assert.equal(tabs?.type, 'tabs');
      assert.deepEqual(tabs.nodes?.map((t) => [t.type, t.data?.title]), [['tabs-item', 'macOS'], ['tabs-item', 'Second tab']]);
      assert.equal(textOf(tabs.nodes![0]!), 'brew install folio');
    },
    { what: 'the API reading the hint, the titled code block and the tabs typed in the app', timeoutMs: 15_000 },
  );
  await page.getByRole('status').filter({ hasText: 'All changes saved' }).waitFor();
  await expectNoA11yViolations(page, 'page in the editor');
  await screenshot(page, 'flow-page-editor');
});

/** Pastes `text` as plain text (what a copy from a terminal or a text editor gives) where the caret is. */
async function pastePlainText(editor: Locator, text: string) {
  await editor.evaluate((el, pasted) => {
    const data = new DataTransfer();
    data.setData('text/plain', pasted);
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

test('markdown pasted as plain text becomes blocks, as the API reads that markdown; plain prose stays as it is', async () => {
  const { owner, space, pageIds, editor, cr } = await writerInEditor('Pia Paste', 'Paste Inc', 'Readme', 'Intro.\n');

  await newParagraphAfter(editor, 'Intro.');
  await pastePlainText(editor, '## Install\n\nRun **this** and read [the guide](https://example.com/guide).\n\n- one\n- two\n\n```sh\nnpm ci\n```\n');
  await editor.getByRole('heading', { name: 'Install' }).waitFor();
  await newParagraphAfter(editor, 'Intro.');
  await pastePlainText(editor, 'Just words, nothing to format.');
  await editor.getByText('Just words, nothing to format.').waitFor();

  await eventually(
    async () => {
      const nodes = (await documentOf(owner, space.id, cr.id, pageIds[0]!)).nodes ?? [];
      assert.deepEqual(nodes.map((n) => n.type), ['paragraph', 'paragraph', 'heading-1', 'paragraph', 'list-unordered', 'code']);
      assert.equal(textOf(nodes[1]!), 'Just words, nothing to format.');
      assert.equal(textOf(nodes[2]!), 'Install');
      const link = nodes[3]!.nodes?.find((n) => n.type === 'link');
      assert.deepEqual(link?.data?.ref, { kind: 'url', url: 'https://example.com/guide' });
      assert.equal(textOf(nodes[5]!), 'npm ci');
      assert.equal(nodes[5]!.data?.syntax, 'sh');
    },
    { what: 'the pasted markdown as blocks, read through the API', timeoutMs: 15_000 },
  );
});

test('a page\'s title and description changed in place: Enter moves to the content, the next words are its first, and the API reads them all', async () => {
  const { owner, space, pageIds, page, cr } = await writerInEditor('Tina Title', 'Titles Inc', 'Draft', 'Body.\n');

  const title = page.getByLabel('Page title');
  await title.fill('Release notes');
  await title.press('Enter');
  // Typed at once, as a person who knows Enter leaves the title: the first key must not stay behind in it.
  await page.keyboard.type('Lead. ');
  await eventually(
    async () => {
      const { data } = await owner.api.spaces.getPageInChangeRequestById(space.id, cr.id, pageIds[0]!, { format: 'document' });
      assert.equal(data.title, 'Release notes');
      assert.equal(textOf((data as { document: DocNode }).document), 'Lead. Body.');
    },
    { what: 'the new title and the words typed after Enter, read through the API' },
  );
  assert.equal(await title.inputValue(), 'Release notes', 'the saved title came back without changing the field');

  // The description, under the title: saved on Enter, which goes on into the content too.
  const description = page.getByLabel('Page description');
  await description.fill('What changed, release by release.');
  await description.press('Enter');
  await page.keyboard.type('First. ');
  await eventually(
    async () => {
      const { data } = await owner.api.spaces.getPageInChangeRequestById(space.id, cr.id, pageIds[0]!, { format: 'document' });
      assert.equal((data as { description?: string }).description, 'What changed, release by release.');
      assert.equal(textOf((data as { document: DocNode }).document), 'First. Lead. Body.');
    },
    { what: 'the description and the words typed after Enter, read through the API' },
  );
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Release notes' }).waitFor();
});

test('the session ends mid-edit: typing goes on, "Your session has ended", sign in there, and the API has every word', async () => {
  const { owner, space, pageIds, page, editor, cr } = await writerInEditor('Eve Expiry', 'Expiry Inc', 'Notes', 'First words.\n');
  const saved = page.getByRole('status').filter({ hasText: 'All changes saved' });

  await newParagraphAfter(editor, 'First words.');
  await write(page, 'Typed while signed in.');
  await eventually(async () => assert.match(textOf(await documentOf(owner, space.id, cr.id, pageIds[0]!)), /Typed while signed in\./), { what: 'the first words saved' });
  await saved.waitFor();

  // The session ends elsewhere (signed out, revoked); the writer goes on typing.
  assert.equal(await app.endSessions(owner), 1);
  await write(page, ' Typed after the session ended.');
  const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
  await dialog.waitFor();
  await page.getByRole('status').filter({ hasText: 'Not saved: sign in again to save' }).waitFor();
  // Kept in the browser meanwhile, and not on the server yet.
  const drafts = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('folio:draft:')).map((k) => localStorage.getItem(k) ?? ''));
  assert.equal(drafts.length, 1);
  assert.match(drafts[0]!, /Typed after the session ended\./);
  assert.doesNotMatch(textOf(await documentOf(owner, space.id, cr.id, pageIds[0]!)), /after the session ended/);
  await screenshot(page, 'flow-session-ended-mid-edit');

  await app.fillSignIn(page, owner, { within: dialog });
  await dialog.waitFor({ state: 'detached' });
  await eventually(
    async () => assert.equal(textOf(await documentOf(owner, space.id, cr.id, pageIds[0]!)), 'First words.\nTyped while signed in. Typed after the session ended.'),
    { what: 'the words typed after the session ended saved once signed in again' },
  );
  await saved.waitFor();
  assert.deepEqual(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('folio:draft:'))), [], 'the draft is dropped once saved');
});

test('two people type into one page of a change request at once: both see every character, each other’s names, and the API reads it', async () => {
  const ada = await app.userWithPassword('Ada Author');
  const { org, space, pageIds } = await spaceWithPages(app.t, ada, [{ title: 'Shared notes', markdown: 'Top.\n\nBottom.\n' }], { org: 'Together Inc' });
  const ben = await app.userWithPassword('Ben Builder');
  await addMember(app.t, org.id, ben, 'edit');
  const { data: cr } = await ada.api.spaces.createChangeRequest(space.id, { subject: 'Together' });
  const path = `/app/s/${space.id}/~/changes/${cr.number}/shared-notes`;
  const [first, second] = await Promise.all([app.signedInPage(ada, { via: 'api', path }), app.signedInPage(ben, { via: 'api', path })]);
  const editors = [first.page, second.page].map((p) => p.getByRole('textbox', { name: 'Content of Shared notes' }));
  await Promise.all(editors.map((e) => e.getByText('Bottom.', { exact: true }).waitFor()));
  // Each sees the other on the page.
  await first.page.getByRole('list', { name: 'Also on this page' }).getByText('Ben Builder').waitFor();
  await second.page.getByRole('list', { name: 'Also on this page' }).getByText('Ada Author').waitFor();

  // Each puts the caret at the end of a paragraph (Ada the first, Ben the second), then both type
  // at the same time. The caret is checked before typing: a caret move made by the browser in the
  // same moment as another person's change can be undone (see docs/co-editing.md, limits).
  const caretAtEndOf = (page: Page) =>
    page.evaluate(`(() => {
      const sel = window.getSelection();
      const node = sel?.focusNode;
      const element = node instanceof Element ? node : node?.parentElement;
      const p = element?.closest('p');
      if (!p || !sel) return null;
      const range = document.createRange();
      range.setStart(p, 0);
      range.setEnd(sel.focusNode, sel.focusOffset);
      return { text: p.textContent, before: range.toString().length };
    })()`) as Promise<{ text: string; before: number } | null>;
  const placeAtEnd = async (page: Page, editor: Locator, anchor: string) => {
    await eventually(async () => {
      const at = await caretAtEndOf(page);
      if (at?.text !== anchor || at.before !== anchor.length) {
        await editor.getByText(anchor, { exact: true }).click();
        await page.keyboard.press('End');
      }
      assert.deepEqual(await caretAtEndOf(page), { text: anchor, before: anchor.length });
    }, { what: `the caret at the end of "${anchor}"` });
  };
  await placeAtEnd(first.page, editors[0]!, 'Top.');
  await placeAtEnd(second.page, editors[1]!, 'Bottom.');
  await Promise.all([first.page.keyboard.type(' Ada was here.', { delay: 20 }), second.page.keyboard.type(' Ben too.', { delay: 20 })]);

  const expected = ['Top. Ada was here.', 'Bottom. Ben too.'];
  for (const editor of editors) {
    // The text of each paragraph, without the others' carets (their names are drawn in the text).
    const texts = () => editor.locator('p').evaluateAll((ps) => ps.map((p) => Array.from(p.childNodes).filter((n) => !(n instanceof Element && n.classList.contains('collab-caret'))).map((n) => n.textContent).join('')));
    await eventually(async () => assert.deepEqual(await texts(), expected), { what: 'both editors holding every character' });
  }
  await eventually(async () => assert.equal(textOf(await documentOf(ada, space.id, cr.id, pageIds[0]!)), expected.join('\n')), {
    what: 'the change request reading what both typed',
    timeoutMs: 15_000,
  });
  await first.page.getByRole('status').filter({ hasText: 'All changes saved' }).waitFor();
  await screenshot(first.page, 'flow-co-editing');
});
