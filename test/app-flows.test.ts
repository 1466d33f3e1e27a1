/**
 * The app's end-to-end flows (issue #25, "Done when"), each as a person does it: found by role and
 * label, checked through the API with the official client. Screenshots of the main screens go to
 * test-artifacts/app/, and axe finds nothing serious or critical on them.
 *
 * Flows here: a space built from the sidebar and its page tree (create, title, rename, move,
 * delete, drag and drop), review and publish, rights of a reader, a conflicting merge, and
 * `urls.app` opening its screen. The editor's flows are in test/app-flows-editor.test.ts (a file
 * of their own: the two run side by side).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { expectNoA11yViolations, screenshot, useAppBrowser, waitForScreen } from './support/app-browser.ts';
import { md, spaceWithPages } from './support/app-flows.ts';
import { changeRequestWith, editChangeRequest, newCollection, newMember, newSite, openChangeRequest, statusOf } from './support/factories.ts';
import type { TestUser } from './support/server.ts';
import { eventually, settleJobs } from './support/wait.ts';

// Sites are read on every request, so a page merged just before publishing shows at once.
const app = useAppBrowser({ server: { siteCacheTtlMs: 0 } });

/** The titles of a page tree, depth first, nested ones as "Parent/Child". */
function titles(pages: { title: string; pages?: unknown[] }[], prefix = ''): string[] {
  return pages.flatMap((p) => [`${prefix}${p.title}`, ...titles((p.pages ?? []) as { title: string; pages?: unknown[] }[], `${prefix}${p.title}/`)]);
}

/** The titles of a change request's pages, as the API reads them. */
async function changeRequestTitles(user: TestUser, spaceId: string, number: number): Promise<string[]> {
  const { data: cr } = await user.api.spaces.getChangeRequestById(spaceId, String(number));
  const { data } = await user.api.spaces.listPagesInChangeRequest(spaceId, cr.id);
  return titles(data.pages as { title: string; pages?: unknown[] }[]);
}

/** The change request number the app is on (/app/s/:space/~/changes/:number/…). */
function changeRequestNumber(page: Page): number {
  const match = /\/~\/changes\/(\d+)/.exec(new URL(page.url()).pathname);
  assert.ok(match, `the app is in a change request (on ${page.url()})`);
  return Number(match[1]);
}

/** The page tree (nav "Pages") and the entry of one page in it. */
const tree = (page: Page) => page.getByRole('navigation', { name: 'Pages' });
const treeLink = (page: Page, title: string) => tree(page).getByRole('link', { name: title, exact: true });

/** Opens the page actions menu of `title` in the tree and answers the menu (a <details>). */
async function pageActions(page: Page, title: string): Promise<Locator> {
  const summary = tree(page).getByLabel(`Actions for ${title}`, { exact: true });
  await summary.click();
  return summary.locator('..');
}

/** Waits until the tree shows these titles in this order (top level and nested, depth first). */
async function expectTree(page: Page, expected: string[]) {
  await eventually(async () => {
    const shown = await tree(page).locator('.tree-item > a, .tree-item > .tree-group').allTextContents();
    assert.deepEqual(shown.map((s) => s.replace('↗', '').trim()), expected);
  }, { what: `the page tree showing ${expected.join(', ')}` });
}

test('a space made from the sidebar: first page, titles, new pages, rename, move, delete, drag and drop', async () => {
  const user = await app.userWithPassword('Sam Space');
  const { data: org } = await user.api.orgs.createOrganization({ title: 'Flows Inc' });
  const { page } = await app.signedInPage(user, { path: `/app/o/${org.id}` });
  await page.getByRole('heading', { name: 'Flows Inc', level: 1 }).waitFor();
  await expectNoA11yViolations(page, 'organization');
  await screenshot(page, 'flow-organization');

  // New space from the sidebar.
  await page.getByRole('button', { name: 'New space' }).click();
  const dialog = page.getByRole('dialog', { name: 'New space' });
  await dialog.getByLabel('Space title').fill('Guide');
  await dialog.getByRole('button', { name: 'Create space' }).click();
  await page.getByRole('heading', { name: 'This space has no pages yet' }).waitFor();
  const spaceId = /\/app\/s\/([^/]+)/.exec(new URL(page.url()).pathname)?.[1];
  assert.ok(spaceId, `the app is on the new space (${page.url()})`);
  const { data: space } = await user.api.spaces.getSpaceById(spaceId);
  assert.equal(space.title, 'Guide');
  await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Guide' }).waitFor();

  // The first page, in a change request the app opens; its title typed in the "Page title" field.
  await page.getByRole('button', { name: 'Create the first page' }).click();
  await retitle(page, 'Welcome');
  const number = changeRequestNumber(page);
  await expectTree(page, ['Welcome']);

  // Two more pages with "New page", each titled where it opens.
  for (const title of ['Install', 'Usage', 'Scratch']) {
    await tree(page).getByRole('button', { name: 'New page' }).click();
    await treeLink(page, 'Untitled').waitFor();
    // The tree shows the new page before the app has moved to it: title it once it is open.
    await page.waitForURL(/\/untitled$/);
    await eventually(async () => assert.equal(await page.getByLabel('Page title', { exact: true }).inputValue(), 'Untitled'));
    await retitle(page, title);
  }
  await expectTree(page, ['Welcome', 'Install', 'Usage', 'Scratch']);

  // Move up, rename and delete from each page's actions menu.
  await (await pageActions(page, 'Usage')).getByRole('button', { name: 'Move up' }).click();
  await expectTree(page, ['Welcome', 'Usage', 'Install', 'Scratch']);
  await (await pageActions(page, 'Install')).getByRole('button', { name: 'Rename' }).click();
  const rename = page.getByRole('dialog', { name: 'Rename page' });
  await rename.getByLabel('Page title').fill('Installing');
  await rename.getByRole('button', { name: 'Rename' }).click();
  await expectTree(page, ['Welcome', 'Usage', 'Installing', 'Scratch']);
  await (await pageActions(page, 'Scratch')).getByRole('button', { name: 'Delete' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete “Scratch”?' });
  await confirm.getByRole('button', { name: 'Delete page' }).click();
  await expectTree(page, ['Welcome', 'Usage', 'Installing']);

  // Drag and drop: "Installing" onto the top of "Welcome" goes before it; "Usage" onto the middle
  // of "Welcome" goes inside it.
  await dragInTree(page, 'Installing', 'Welcome', 'before');
  await expectTree(page, ['Installing', 'Welcome', 'Usage']);
  await dragInTree(page, 'Usage', 'Welcome', 'inside');
  await expectTree(page, ['Installing', 'Welcome', 'Usage']);
  await eventually(async () => assert.deepEqual(await changeRequestTitles(user, spaceId, number), ['Installing', 'Welcome', 'Welcome/Usage']), {
    what: 'the change request holding the pages in the order and titles given in the app',
  });
  // A group from the button under the tree, a link inside it from the group's actions, and the
  // link's address changed from its own actions.
  await tree(page).getByRole('button', { name: 'New group' }).click();
  const groupForm = page.getByRole('dialog', { name: 'New group' });
  await groupForm.getByLabel('Group title').fill('Reference');
  await groupForm.getByRole('button', { name: 'Create group' }).click();
  await expectTree(page, ['Installing', 'Welcome', 'Usage', 'Reference']);
  await (await pageActions(page, 'Reference')).getByRole('button', { name: 'Add link inside' }).click();
  const linkForm = page.getByRole('dialog', { name: 'New link' });
  await linkForm.getByLabel('Link title').fill('Status');
  await linkForm.getByLabel('URL').fill('https://status.example.com');
  await linkForm.getByRole('button', { name: 'Create link' }).click();
  await expectTree(page, ['Installing', 'Welcome', 'Usage', 'Reference', 'Status']);
  await (await pageActions(page, 'Status')).getByRole('button', { name: 'Edit link' }).click();
  const relink = page.getByRole('dialog', { name: 'Edit link' });
  await relink.getByLabel('URL').fill('https://status.example.org');
  await relink.getByRole('button', { name: 'Save link' }).click();
  await eventually(async () => assert.equal(await treeLink(page, 'Status').getAttribute('href'), 'https://status.example.org'));
  await eventually(async () => assert.deepEqual(await changeRequestTitles(user, spaceId, number), ['Installing', 'Welcome', 'Welcome/Usage', 'Reference', 'Reference/Status']), {
    what: 'the group and its link in the change request',
  });
  // The main content is untouched until the change request is merged.
  const { data: main } = await user.api.spaces.listPages(spaceId);
  assert.deepEqual(titles(main.pages as { title: string }[]), []);

  await expectNoA11yViolations(page, 'page tree in a change request');
  await screenshot(page, 'flow-page-tree');
});

/** Types a title into the open page's "Page title" field and waits for the tree to have it. */
async function retitle(page: Page, title: string) {
  const field = page.getByLabel('Page title', { exact: true });
  await field.fill(title);
  await field.press('Enter');
  await treeLink(page, title).waitFor();
  await eventually(async () => assert.equal(await field.inputValue(), title));
}

/** Drags one tree entry onto another: its top (before), middle (inside) or bottom (after). */
async function dragInTree(page: Page, source: string, target: string, where: 'before' | 'inside' | 'after') {
  const from = treeLink(page, source).locator('..');
  const to = treeLink(page, target).locator('..');
  const box = await to.boundingBox();
  assert.ok(box, `${target} is on screen`);
  const y = where === 'before' ? box.height * 0.1 : where === 'after' ? box.height * 0.9 : box.height * 0.5;
  await from.dragTo(to, { targetPosition: { x: box.width / 3, y } });
}

test('review: the diff of the changed page, a comment, merge; then publish the space and read the page on the site', async () => {
  const owner = await app.userWithPassword('Rita Review');
  const { org, space, pageIds } = await spaceWithPages(app.t, owner, [{ title: 'Getting started', markdown: 'Hello readers.\n' }]);
  const cr = await openChangeRequest(owner, space.id, 'Friendlier welcome');
  await editChangeRequest(owner, space.id, cr.id, [{ operation: 'update_page', page: pageIds[0], document: md('Hello readers.\n\nWelcome aboard the zeppelin.\n') }]);

  // The page in the change request, then its review through the banner's link.
  const { page } = await app.signedInPage(owner, { via: 'api', path: `/app/s/${space.id}/~/changes/${cr.number}/` });
  await page.getByRole('region', { name: 'Change request' }).getByRole('link', { name: 'Review changes' }).click();
  await page.getByRole('heading', { name: `#${cr.number} Friendlier welcome`, level: 1 }).waitFor();

  // The changed page's diff, rendered: the added paragraph marked as added, the kept one as
  // unchanged, both as text (no JSON).
  const change = page.getByRole('article', { name: 'Edited: Getting started' });
  const added = change.getByRole('group', { name: 'Added' });
  await added.getByText('Welcome aboard the zeppelin.').waitFor();
  await change.getByRole('article', { name: 'Changes' }).getByText('Hello readers.').waitFor();
  assert.deepEqual(await added.allTextContents(), ['Welcome aboard the zeppelin.'], 'only the new paragraph is marked added');
  assert.equal(await change.getByRole('group', { name: 'Removed' }).count(), 0, 'nothing removed');
  const shown = (await change.textContent()) ?? '';
  assert.doesNotMatch(shown, /"object"|"nodes"|\{"/, `the diff is rendered, not JSON: ${shown}`);

  // A comment, seen on the screen and through the API.
  await page.getByLabel('Comment', { exact: true }).fill('Looks good to me.');
  await page.getByRole('button', { name: 'Post comment' }).click();
  await page.getByRole('region', { name: 'Comments' }).getByRole('listitem').getByText('Looks good to me.').waitFor();
  const { data: comments } = await owner.api.spaces.listCommentsInChangeRequest(space.id, cr.id);
  assert.deepEqual(comments.items.map((c) => (c.body as { markdown?: string }).markdown ?? JSON.stringify(c.body)).map((s) => s.trim()), ['Looks good to me.']);
  // "Edit pages" goes to the change request's pages (not back to the review), whose banner links back.
  await page.getByRole('link', { name: 'Edit pages' }).click();
  await page.getByRole('textbox', { name: 'Content of Getting started' }).waitFor();
  await page.getByRole('region', { name: 'Change request' }).getByRole('link', { name: 'Review changes' }).click();
  await change.getByText('Welcome aboard the zeppelin.').waitFor();
  await page.getByRole('region', { name: 'Comments' }).getByRole('listitem').getByText('Looks good to me.').waitFor();
  await expectNoA11yViolations(page, 'change request review');
  await screenshot(page, 'flow-change-request-review');

  // Archived, then reopened: no Merge while it is set aside.
  await page.getByRole('button', { name: 'Archive' }).click();
  await page.getByRole('status').filter({ hasText: 'Archived: reopen it to go on.' }).waitFor();
  await page.getByRole('button', { name: 'Merge' }).waitFor({ state: 'detached' });
  assert.equal((await owner.api.spaces.getChangeRequestById(space.id, cr.id)).data.status, 'archived');
  await page.getByRole('button', { name: 'Reopen' }).click();
  await page.getByRole('status').filter({ hasText: 'Reopened.' }).waitFor();
  assert.equal((await owner.api.spaces.getChangeRequestById(space.id, cr.id)).data.status, 'open');

  // Renamed before merging: the heading and the API say the new subject.
  await page.getByRole('button', { name: 'Rename' }).click();
  const subject = page.getByLabel(`Subject of change request #${cr.number}`);
  assert.equal(await subject.inputValue(), 'Friendlier welcome');
  await subject.fill('A friendlier welcome page');
  await subject.press('Enter');
  await page.getByRole('heading', { name: `#${cr.number} A friendlier welcome page`, level: 1 }).waitFor();
  assert.equal((await owner.api.spaces.getChangeRequestById(space.id, cr.id)).data.subject, 'A friendlier welcome page');

  await page.getByRole('button', { name: 'Merge' }).click();
  await page.getByRole('status').filter({ hasText: 'Merged.' }).waitFor();
  await page.getByRole('button', { name: 'Merge' }).waitFor({ state: 'detached' });
  const { data: merged } = await owner.api.spaces.getChangeRequestById(space.id, cr.id);
  assert.equal(merged.status, 'merged');
  const { data: read } = await owner.api.spaces.getPageById(space.id, pageIds[0]!, { format: 'markdown' });
  assert.match((read as { markdown: string }).markdown, /Welcome aboard the zeppelin\./);

  // Publish from the space header: a site of the space, published; its screen links to it.
  await page.getByRole('button', { name: 'Publish' }).click();
  const publish = page.getByRole('dialog', { name: 'Publish this space' });
  await publish.getByRole('button', { name: 'Publish site' }).click();
  const open = page.getByRole('link', { name: 'Open published site' });
  await open.waitFor();
  await page.getByRole('heading', { name: 'Handbook', level: 1 }).waitFor();
  await expectNoA11yViolations(page, 'site');
  await screenshot(page, 'flow-site');
  const { data: sites } = await owner.api.orgs.listSites(org.id);
  assert.equal(sites.items.length, 1);
  const href = await open.getAttribute('href');
  assert.equal(href, sites.items[0]!.urls.published);

  // The published site, opened as a reader would: the page and its merged text.
  await settleJobs(app.t);
  const reader = await app.newPage();
  await reader.page.goto(href!);
  await reader.page.getByRole('heading', { name: 'Getting started' }).first().waitFor();
  await reader.page.getByText('Welcome aboard the zeppelin.').waitFor();
  await screenshot(reader.page, 'flow-published-site');
});

test('members: an admin invites by email, changes a role, cannot demote the last admin, removes a member; a reader only reads the list', async () => {
  const admin = await app.userWithPassword('Mia Manager');
  const invitee = await app.userWithPassword('Ivan Invitee');
  const { data: org } = await admin.api.orgs.createOrganization({ title: 'People Inc' });
  const { page } = await app.signedInPage(admin, { via: 'api', path: `/app/o/${org.id}` });
  const orgNav = page.getByRole('navigation', { name: 'Organization' });
  assert.equal(await orgNav.getByRole('link', { name: 'Overview' }).getAttribute('aria-current'), 'page');
  await orgNav.getByRole('link', { name: 'Members' }).click();
  await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
  assert.equal(await orgNav.getByRole('link', { name: 'Members' }).getAttribute('aria-current'), 'page', 'the sidebar marks where the person is');
  assert.equal(await orgNav.getByRole('link', { name: 'Overview' }).getAttribute('aria-current'), null);

  // One address with an account (a member at once), one without (it waits for its account).
  await page.getByLabel('Email addresses').fill(`${invitee.email}, nobody-yet@example.com`);
  await page.getByLabel('Role', { exact: true }).selectOption({ label: 'Editor' });
  await page.getByRole('button', { name: 'Invite' }).click();
  await page.getByRole('status').filter({ hasText: '1 person added as Editor. The other address is already a member, or has no Folio account yet' }).waitFor();
  const role = page.getByLabel('Role of Ivan Invitee');
  assert.equal(await role.inputValue(), 'edit');
  assert.equal((await admin.api.orgs.getMemberInOrganizationById(org.id, invitee.id)).data.role, 'edit');
  await expectNoA11yViolations(page, 'members');
  await screenshot(page, 'flow-members');

  await role.selectOption({ label: 'Reviewer' });
  await page.getByRole('status').filter({ hasText: 'Ivan Invitee is now Reviewer.' }).waitFor();
  assert.equal((await admin.api.orgs.getMemberInOrganizationById(org.id, invitee.id)).data.role, 'review');

  // The API's rule, shown as it says it; the select stays on Admin.
  await page.getByLabel('Role of Mia Manager').selectOption({ label: 'Reader' });
  await page.getByRole('alert').filter({ hasText: 'last admin' }).waitFor();
  await eventually(async () => assert.equal(await page.getByLabel('Role of Mia Manager').inputValue(), 'admin'));

  // A reviewer sees who is there, and changes nothing.
  const other = await app.signedInPage(invitee, { via: 'api', path: `/app/o/${org.id}/members` });
  await other.page.getByRole('row', { name: /Mia Manager/ }).waitFor();
  assert.equal(await other.page.getByRole('button', { name: 'Invite' }).count(), 0, 'no invite form for a reviewer');
  assert.equal(await other.page.getByRole('combobox', { name: /^Role of/ }).count(), 0, 'no role to change for a reviewer');
  assert.equal(await other.page.getByRole('row', { name: /Ivan Invitee/ }).getByRole('cell', { name: 'Reviewer' }).count(), 1);

  await page.getByRole('button', { name: 'Remove Ivan Invitee' }).click();
  await page.getByRole('dialog', { name: 'Remove Ivan Invitee from People Inc?' }).getByRole('button', { name: 'Remove member' }).click();
  await page.getByRole('status').filter({ hasText: 'Ivan Invitee was removed.' }).waitFor();
  await page.getByRole('row', { name: /Ivan Invitee/ }).waitFor({ state: 'detached' });
  const { data: left } = await admin.api.orgs.listMembersInOrganizationById(org.id);
  assert.deepEqual(left.items.map((m) => m.id), [admin.id]);
});

test('on a phone-sized screen: one column, the sidebar folded behind "Menu", nothing wider than the screen', async () => {
  const owner = await app.userWithPassword('Nora Narrow');
  const { org, space } = await spaceWithPages(app.t, owner, [{ title: 'Pocket guide', markdown: 'Read me on the train.\n' }], { org: 'Narrow Inc' });
  const { page } = await app.signedInPage(owner, { via: 'api', path: `/app/s/${space.id}/` });
  await page.setViewportSize({ width: 390, height: 800 });
  const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

  await page.getByRole('heading', { name: 'Pocket guide', level: 1 }).waitFor();
  assert.ok(await page.getByText('Read me on the train.').isVisible());
  const menu = page.getByRole('button', { name: 'Menu' });
  const sidebar = page.getByRole('navigation', { name: 'Organization' });
  assert.equal(await menu.getAttribute('aria-expanded'), 'false');
  assert.equal(await sidebar.isVisible(), false, 'the sidebar is folded away');
  assert.equal(await sideways(), 0, 'the space screen fits the screen');
  await expectNoA11yViolations(page, 'space on a phone');
  await screenshot(page, 'flow-phone-space');

  await menu.click();
  await sidebar.waitFor();
  assert.equal(await menu.getAttribute('aria-expanded'), 'true');
  await sidebar.getByRole('link', { name: 'Members' }).click();
  await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
  await sidebar.waitFor({ state: 'hidden' });
  assert.equal(new URL(page.url()).pathname, `/app/o/${org.id}/members`);
  await page.getByRole('row', { name: /Nora Narrow/ }).waitFor();
  assert.equal(await sideways(), 0, 'the members screen fits the screen (its table scrolls on its own)');
});

test('comments on a page: posted under that page only, resolved, and read so through the API', async () => {
  const owner = await app.userWithPassword('Cora Comment');
  const { space, pageIds } = await spaceWithPages(app.t, owner, [
    { title: 'Setup', markdown: 'Run the installer.\n' },
    { title: 'Usage', markdown: 'Open the app.\n' },
  ]);
  const { page } = await app.signedInPage(owner, { via: 'api', path: `/app/s/${space.id}/setup` });
  const region = page.getByRole('region', { name: 'Comments on this page' });
  await region.getByText('No comments yet.').waitFor();
  await region.getByLabel('Comment', { exact: true }).fill('Which installer, <b>exactly</b>?');
  await region.getByRole('button', { name: 'Post comment' }).click();
  const item = region.getByRole('listitem').filter({ hasText: 'Which installer, <b>exactly</b>?' });
  await item.waitFor();
  const { data: onSetup } = await owner.api.spaces.listCommentsInSpace(space.id, { targetPage: pageIds[0]!, format: 'markdown' });
  assert.deepEqual(onSetup.items.map((c) => [(c.body as { markdown?: string }).markdown?.trim(), c.target.page?.id, c.status]), [['Which installer, <b>exactly</b>?', pageIds[0], 'open']]);

  await item.getByRole('button', { name: 'Resolve' }).click();
  await item.getByText('Resolved by Cora Comment').waitFor();
  assert.equal((await owner.api.spaces.getCommentInSpace(space.id, onSetup.items[0]!.id)).data.status, 'resolved');
  await expectNoA11yViolations(page, 'page with comments');

  // Another page has its own (none).
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
  await region.getByText('No comments yet.').waitFor();
  assert.equal(await region.getByRole('listitem').count(), 0);
});

test('Export PDF from a page: only that page is printed, and the link downloads it', async () => {
  const owner = await app.userWithPassword('Paula Printer');
  const { space } = await spaceWithPages(app.t, owner, [
    { title: 'Setup', markdown: 'Run the installer.\n' },
    { title: 'Usage', markdown: 'Open the app.\n' },
  ]);
  const { page } = await app.signedInPage(owner, { via: 'api', path: `/app/s/${space.id}/setup` });
  await page.getByRole('button', { name: 'Export PDF' }).click();
  const dialog = page.getByRole('dialog', { name: 'Export as PDF' });
  await dialog.getByLabel('Only “Setup”').check();
  await dialog.getByRole('button', { name: 'Create PDF' }).click();
  const link = dialog.getByRole('link', { name: 'Download the PDF' });
  await link.waitFor({ timeout: 30_000 });
  await expectNoA11yViolations(page, 'export as PDF');

  const res = await page.request.get((await link.getAttribute('href'))!);
  assert.equal(res.status(), 200);
  assert.equal(res.headers()['content-type'], 'application/pdf');
  const pdf = await getDocument({ data: new Uint8Array(await res.body()), verbosity: 0 }).promise;
  let text = '';
  for (let i = 1; i <= pdf.numPages; i++) text += ` ${(await (await pdf.getPage(i)).getTextContent()).items.map((item) => ('str' in item ? item.str : '')).join(' ')}`;
  await pdf.destroy();
  assert.match(text, /Run the installer\./);
  assert.doesNotMatch(text, /Open the app\./, 'only the page asked for');
});

test('from the sidebar: a collection, a space made inside it, and another organization', async () => {
  const user = await app.userWithPassword('Cole Collector');
  const { data: org } = await user.api.orgs.createOrganization({ title: 'Shelves Inc' });
  const { page } = await app.signedInPage(user, { via: 'api', path: `/app/o/${org.id}` });
  const sidebar = page.getByRole('navigation', { name: 'Organization' });

  await sidebar.getByRole('button', { name: 'New collection' }).click();
  const newCollection = page.getByRole('dialog', { name: 'New collection' });
  await newCollection.getByLabel('Collection title').fill('Guides');
  await newCollection.getByRole('button', { name: 'Create collection' }).click();
  await page.getByRole('heading', { name: 'Guides', level: 1 }).waitFor();
  await sidebar.getByRole('link', { name: 'Guides' }).waitFor();
  const collectionId = /\/app\/c\/([^/]+)/.exec(new URL(page.url()).pathname)?.[1];
  assert.ok(collectionId, `the app is on the new collection (${page.url()})`);
  assert.equal((await user.api.collections.getCollectionById(collectionId)).data.title, 'Guides');

  await page.getByRole('button', { name: 'New space in this collection' }).click();
  const newSpace = page.getByRole('dialog', { name: 'New space in this collection' });
  await newSpace.getByLabel('Space title').fill('Onboarding');
  await newSpace.getByRole('button', { name: 'Create space' }).click();
  await page.getByRole('heading', { name: 'This space has no pages yet' }).waitFor();
  const spaceId = /\/app\/s\/([^/]+)/.exec(new URL(page.url()).pathname)?.[1];
  assert.ok(spaceId);
  assert.equal((await user.api.spaces.getSpaceById(spaceId)).data.parent, collectionId, 'the space is in the collection');
  await sidebar.getByRole('link', { name: 'Guides' }).click();
  await page.getByRole('main').getByRole('link', { name: /Onboarding/ }).waitFor();

  await page.getByRole('button', { name: 'New organization' }).click();
  const newOrg = page.getByRole('dialog', { name: 'New organization' });
  await newOrg.getByLabel('Organization name').fill('Second Shelf Inc');
  await newOrg.getByRole('button', { name: 'Create organization' }).click();
  await page.getByRole('heading', { name: 'Second Shelf Inc', level: 1 }).waitFor();
  const { data: orgs } = await user.api.orgs.listOrganizationsForAuthenticatedUser();
  assert.deepEqual(orgs.items.map((o) => o.title).sort(), ['Second Shelf Inc', 'Shelves Inc']);
  assert.deepEqual(await page.getByLabel('Organization', { exact: true }).locator('option').allTextContents(), ['Shelves Inc', 'Second Shelf Inc']);
});

test('space settings: renamed, then deleted; the API agrees, and the sidebar follows', async () => {
  const owner = await app.userWithPassword('Sid Settings');
  const { org, space } = await spaceWithPages(app.t, owner, [{ title: 'Notes', markdown: 'Some notes.\n' }], { org: 'Settings Inc', space: 'Drafts' });
  const { page } = await app.signedInPage(owner, { via: 'api', path: `/app/s/${space.id}/` });
  await page.getByRole('navigation', { name: 'Space' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  await page.getByLabel('Space title').fill('Field notes');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  assert.equal((await owner.api.spaces.getSpaceById(space.id)).data.title, 'Field notes');
  await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Field notes' }).waitFor();
  await expectNoA11yViolations(page, 'space settings');

  await page.getByRole('button', { name: 'Delete space' }).click();
  await page.getByRole('dialog', { name: 'Delete “Field notes”?' }).getByRole('button', { name: 'Delete space' }).click();
  await page.getByRole('heading', { name: 'Settings Inc', level: 1 }).waitFor();
  await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Field notes' }).waitFor({ state: 'detached' });
  const { data: left } = await owner.api.orgs.listSpacesInOrganizationById(org.id);
  assert.deepEqual(left.items.map((s) => s.id), [], 'the space is deleted');
});

test('rights: a reader sees no Edit and no Merge, and the API refuses their merge', async () => {
  const owner = await app.userWithPassword('Olga Owner');
  const { org, space, pageIds } = await spaceWithPages(app.t, owner, [{ title: 'Rules', markdown: 'Read only here.\n' }], { org: 'Rights Inc' });
  const cr = await changeRequestWith(owner, space.id, [{ operation: 'update_page', page: pageIds[0], document: md('Read only here, mostly.\n') }], { subject: 'Soften the rules' });
  const reader = await newMember(app.t, org.id, 'read', 'Rick Reader');

  const { page } = await app.signedInPage(reader, { via: 'api', path: `/app/s/${space.id}/` });
  await page.getByRole('heading', { name: 'Rules', level: 1 }).waitFor();
  // The page is there to read, not to write.
  await page.getByRole('article', { name: 'Content of Rules' }).getByText('Read only here.').waitFor();
  assert.equal(await page.getByRole('textbox', { name: 'Content of Rules' }).count(), 0, 'the page is not editable for a reader');
  assert.equal(await page.getByRole('button', { name: 'Edit' }).count(), 0, 'no Edit button for a reader');
  assert.equal(await tree(page).getByRole('button', { name: 'New page' }).count(), 0, 'no New page for a reader');
  await expectNoA11yViolations(page, 'space page read');
  await screenshot(page, 'flow-space-page-read');

  await page.goto(app.url(`/app/s/${space.id}/~/changes/${cr.number}`));
  await page.getByRole('heading', { name: `#${cr.number} Soften the rules`, level: 1 }).waitFor();
  await page.getByRole('article', { name: 'Edited: Rules' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Merge' }).count(), 0, 'no Merge button for a reader');
  assert.equal(await page.getByRole('link', { name: 'Edit pages' }).count(), 0, 'no Edit pages link for a reader');

  // The API refuses anyway: from the app's own session and from the reader's token.
  const fromApp = await page.evaluate(
    (path) => fetch(path, { method: 'POST', headers: { 'x-folio-csrf': '1', 'content-type': 'application/json' }, body: '{}' }).then((r) => r.status),
    `/v1/spaces/${space.id}/change-requests/${cr.number}/merge`,
  );
  assert.equal(fromApp, 403);
  assert.equal(await statusOf(reader.api.spaces.mergeChangeRequest(space.id, cr.id)), 403);
  assert.equal((await owner.api.spaces.getChangeRequestById(space.id, cr.id)).data.status, 'open');
});

test('a conflicting merge says so in an alert and lists the page under "Conflicts to resolve"', async () => {
  const owner = await app.userWithPassword('Cora Conflict');
  const { space, pageIds } = await spaceWithPages(app.t, owner, [{ title: 'Policy', markdown: 'Same line.\n' }], { org: 'Conflict Inc' });
  const a = await changeRequestWith(owner, space.id, [{ operation: 'update_page', page: pageIds[0], document: md('Line from A.\n') }], { subject: 'A' });
  const b = await changeRequestWith(owner, space.id, [{ operation: 'update_page', page: pageIds[0], document: md('Line from B.\n') }], { subject: 'B' });
  await owner.api.spaces.mergeChangeRequest(space.id, a.id);

  const { page, problems } = await app.signedInPage(owner, { via: 'api', path: `/app/s/${space.id}/~/changes/${b.number}` });
  // The refused merge answers 409: the browser logs it; the screen says it.
  problems.allow(/status of 409/);
  await page.getByRole('heading', { name: `#${b.number} B`, level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Merge' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match((await alert.textContent()) ?? '', /conflicts with the space on 1 page/);
  const conflicts = page.getByRole('region', { name: 'Conflicts to resolve' });
  await conflicts.getByRole('link', { name: 'Policy' }).waitFor();
  await expectNoA11yViolations(page, 'change request with conflicts');
  await screenshot(page, 'flow-merge-conflict');
  assert.equal((await owner.api.spaces.getChangeRequestById(space.id, b.id)).data.status, 'open');

  // Updating from the main content marks the conflict in the page, listed until it is edited.
  await conflicts.getByRole('button', { name: 'Update from main content' }).click();
  await page.getByRole('status').filter({ hasText: 'Updated from the main content' }).waitFor();
  await conflicts.getByText('conflict markers left by an update').waitFor();
  const { data: marked } = await owner.api.spaces.getPageInChangeRequestById(space.id, b.id, pageIds[0]!, { format: 'markdown' });
  assert.match((marked as { markdown: string }).markdown, /Line from A\.[\s\S]*Line from B\.|Line from B\.[\s\S]*Line from A\./);
});

test('urls.app from the API opens its screen: organization, space, page, change request, collection, site', async () => {
  const owner = await app.userWithPassword('Uma Urls');
  const { org, space, pageIds } = await spaceWithPages(app.t, owner, [{ title: 'Overview', markdown: 'The overview.\n' }], { org: 'Links Inc', space: 'Atlas' });
  const cr = await openChangeRequest(owner, space.id, 'Linked change');
  const collection = await newCollection(owner, org.id, 'Shelf');
  const site = await newSite(owner, org.id, { title: 'Atlas Site', spaces: [space.id] });
  const { data: orgRead } = await owner.api.orgs.getOrganizationById(org.id);
  const { data: spaceRead } = await owner.api.spaces.getSpaceById(space.id);
  const { data: pageRead } = await owner.api.spaces.getPageById(space.id, pageIds[0]!);
  const { data: crRead } = await owner.api.spaces.getChangeRequestById(space.id, cr.id);
  const { data: collectionRead } = await owner.api.collections.getCollectionById(collection.id);
  const { data: siteRead } = await owner.api.orgs.getSiteById(org.id, site.id);

  const { page } = await app.signedInPage(owner, { via: 'api', path: '/app/' });
  const screens: [string, string, (page: Page) => Locator][] = [
    ['organization', orgRead.urls.app, (p) => p.getByRole('heading', { name: 'Links Inc', level: 1 })],
    ['space', spaceRead.urls.app, (p) => p.getByRole('heading', { name: 'Overview', level: 1 })],
    ['page', (pageRead as { urls: { app: string } }).urls.app, (p) => p.getByRole('heading', { name: 'Overview', level: 1 })],
    ['change request', crRead.urls.app, (p) => p.getByRole('heading', { name: `#${cr.number} Linked change`, level: 1 })],
    ['collection', collectionRead.urls.app, (p) => p.getByRole('heading', { name: 'Shelf', level: 1 })],
    ['site', siteRead.urls.app, (p) => p.getByRole('heading', { name: 'Atlas Site', level: 1 })],
  ];
  for (const [what, url, heading] of screens) {
    assert.ok(url.startsWith(app.url('/app/')), `the ${what}'s urls.app is in the app: ${url}`);
    await page.goto(url);
    await waitForScreen(page);
    await heading(page).waitFor({ timeout: 5_000 }).catch((err: Error) => {
      throw new Error(`the ${what}'s urls.app (${url}) did not show its screen (on ${page.url()}): ${err.message}`);
    });
  }
  // The space's screen names the space; the page's, the page in the tree as the current one.
  await page.goto(spaceRead.urls.app);
  await page.locator('.space-title').getByText('Atlas').waitFor();
  await page.goto((pageRead as { urls: { app: string } }).urls.app);
  await tree(page).locator('a[aria-current="page"]').getByText('Overview').waitFor();
});
