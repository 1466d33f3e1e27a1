import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';
import { zipSync } from 'fflate';
import { orgWithSpace } from './support/factories.ts';
import { findPage, folderFiles, IMPORT_FIXTURES, importFiles, pagesOf, shape, upload, type Run } from './support/imports.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';

// Real projects' documentation (small samples kept with their licences in
// test/fixtures/imports/projects/, see SOURCES.txt there) imported through the API: the navigation
// with its order and nesting, admonitions, tabs and code blocks as blocks (counted in the source
// here, by simple patterns of the tools' syntax, not by the importer), links between pages as
// page links. bench/import-fidelity.ts measures the same on the projects' whole docs.

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const SAMPLES = join(IMPORT_FIXTURES, 'projects');

/** The sample folder zipped as a person zips a folder (one folder holding it). */
function zipSample(name: string): Buffer {
  const files = folderFiles(join(SAMPLES, name));
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([p, d]) => [`${basename(name)}/${p}`, d]))));
}

type Node = { object?: string; type?: string; data?: { ref?: { kind?: string; page?: string } }; [k: string]: unknown };

/** The blocks of a page's document by type, and the pages its links point at. */
async function documentOf(user: TestUser, spaceId: string, pageId: string): Promise<{ blocks: Map<string, number>; linkedPages: string[] }> {
  const { data } = await user.api.spaces.getPageById(spaceId, pageId);
  const blocks = new Map<string, number>();
  const linkedPages: string[] = [];
  const walk = (n: unknown) => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const node = n as Node;
    if (node.object === 'block' && node.type) blocks.set(node.type, (blocks.get(node.type) ?? 0) + 1);
    if (node.object === 'inline' && node.type === 'link' && node.data?.ref?.page && ['page', 'anchor'].includes(node.data.ref.kind ?? '')) linkedPages.push(node.data.ref.page);
    for (const v of Object.values(node)) if (v && typeof v === 'object') walk(v);
  };
  walk((data as unknown as { document: unknown }).document);
  return { blocks, linkedPages };
}

/** Fenced code blocks of a source page (fences shown inside a fence are part of it). */
function sourceFences(text: string): string[] {
  const infos: string[] = [];
  let open: { ch: string; len: number; indent: number } | null = null;
  for (const line of text.split('\n')) {
    const m = /^( *)(`{3,}|~{3,})(.*)$/.exec(line);
    if (!m) continue;
    if (open) {
      if (m[2]![0] === open.ch && m[2]!.length >= open.len && !m[3]!.trim() && m[1]!.length <= open.indent + 3) open = null;
    } else {
      open = { ch: m[2]![0]!, len: m[2]!.length, indent: m[1]!.length };
      infos.push(m[3]!.trim());
    }
  }
  return infos;
}

const source = (sample: string, path: string) => readFileSync(join(SAMPLES, sample, path), 'utf8');
const count = (m: Map<string, number>, type: string) => m.get(type) ?? 0;
/** Lines matching `re` outside fenced code. */
function outsideCode(text: string, re: RegExp): number {
  let open: { ch: string; len: number; indent: number } | null = null;
  let n = 0;
  for (const line of text.split('\n')) {
    const m = /^( *)(`{3,}|~{3,})(.*)$/.exec(line);
    if (open) {
      if (m && m[2]![0] === open.ch && m[2]!.length >= open.len && !m[3]!.trim() && m[1]!.length <= open.indent + 3) open = null;
      continue;
    }
    if (m) {
      open = { ch: m[2]![0]!, len: m[2]!.length, indent: m[1]!.length };
      continue;
    }
    if (re.test(line)) n++;
  }
  return n;
}

test('Jest (Docusaurus, docs beside website/, sidebars.json): the sidebar becomes the tree, admonitions, tab blocks and code blocks become blocks, links resolve', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const before = await pagesOf(admin, space.id);
  const key = await upload(admin, org.id, 'jest.zip', zipSample('jest'));
  const run: Run = await importFiles(t, admin, org.id, { space: space.id }, [key]);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'docusaurus');
  assert.deepEqual(run.progress, { pagesFound: 5, pagesConverted: 5, pagesFailed: 0 });

  // website/sidebars.json, in its order; its categories are groups (GitBook's top level).
  const pages = (await pagesOf(admin, space.id)).slice(before.length);
  assert.deepEqual(shape(pages), [
    ['Introduction', ['Getting Started', 'Using Matchers', 'Testing Asynchronous Code', 'Setup and Teardown']],
    ['Guides', ['Test Environment']],
  ]);
  assert.deepEqual(pages.map((p) => p.type), ['group', 'group']);
  const sourceOf = new Map((run.pages ?? []).map((p) => [p.id, (p as { sourceURL?: string }).sourceURL]));
  assert.equal(sourceOf.get(findPage(pages, 'Getting Started').id), 'docs/GettingStarted.md');

  // Constructs: every page's admonitions, code blocks and sets of tab blocks, counted in its source.
  for (const [title, file] of [
    ['Getting Started', 'docs/GettingStarted.md'],
    ['Using Matchers', 'docs/UsingMatchers.md'],
    ['Testing Asynchronous Code', 'docs/TestingAsyncCode.md'],
    ['Setup and Teardown', 'docs/SetupAndTeardown.md'],
    ['Test Environment', 'docs/TestEnvironment.md'],
  ] as const) {
    const text = source('jest', file);
    const { blocks } = await documentOf(admin, space.id, findPage(pages, title).id);
    const fences = sourceFences(text);
    assert.equal(count(blocks, 'code'), fences.length, `${title}: code blocks`);
    // An admonition holding code is split around it into hints of its style: at least one hint each.
    const admonitions = outsideCode(text, /^\s*:::[a-z]+/);
    assert.ok(count(blocks, 'hint') >= admonitions && (admonitions === 0) === (count(blocks, 'hint') === 0), `${title}: ${count(blocks, 'hint')} hints for ${admonitions} admonitions`);
    const tabFences = fences.filter((info) => /\stab(\s|$)/.test(` ${info}`)).length;
    assert.equal(count(blocks, 'tabs') * 2, tabFences, `${title}: tab blocks (pairs of JavaScript/TypeScript) become tabs`);
  }
  const testEnv = await documentOf(admin, space.id, findPage(pages, 'Test Environment').id);
  assert.equal(count(testEnv.blocks, 'tabs'), 8);

  // Links between sampled pages are page links; links to docs outside the sample are kept, with a warning.
  const gettingStarted = await documentOf(admin, space.id, findPage(pages, 'Getting Started').id);
  assert.ok(gettingStarted.linkedPages.includes(findPage(pages, 'Using Matchers').id), 'GettingStarted.md → UsingMatchers.md');
  const setup = await documentOf(admin, space.id, findPage(pages, 'Setup and Teardown').id);
  assert.deepEqual(setup.linkedPages, [findPage(pages, 'Testing Asynchronous Code').id], 'SetupAndTeardown.md → TestingAsyncCode.md');
  const matchers = await documentOf(admin, space.id, findPage(pages, 'Using Matchers').id);
  assert.ok(matchers.linkedPages.includes(findPage(pages, 'Testing Asynchronous Code').id));
  assert.ok(run.warnings.some((w) => w.page === 'docs/GettingStarted.md' && /link to "CLI\.md": no such file/.test(w.message)), JSON.stringify(run.warnings));
});

test('Material for MkDocs (mkdocs.yml nav, navigation.indexes): sections and order kept, !!!/??? admonitions, === tabs and code blocks become blocks, reference links resolve', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const before = await pagesOf(admin, space.id);
  const key = await upload(admin, org.id, 'material.zip', zipSample('material'));
  const run: Run = await importFiles(t, admin, org.id, { space: space.id }, [key]);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'mkdocs');
  assert.deepEqual(run.progress, { pagesFound: 6, pagesConverted: 6, pagesFailed: 0 });

  const pages = (await pagesOf(admin, space.id)).slice(before.length);
  // Pages keep their own titles, the nav's titles are their link titles; "Reference" starts with
  // reference/index.md: with navigation.indexes that is the section's own page.
  assert.deepEqual(shape(pages), ['Material for MkDocs', ['Getting started', ['Getting started', 'Creating your site']], ['Reference', ['Admonitions', 'Content tabs']]]);
  assert.deepEqual(pages.map((p) => p.type), ['document', 'group', 'document']);
  assert.equal(pages[0]!.linkTitle, 'Home');
  const installation = pages[1]!.pages![0]!;
  assert.equal(installation.linkTitle, 'Installation');
  const sourceOf = new Map((run.pages ?? []).map((p) => [p.id, (p as { sourceURL?: string }).sourceURL]));
  assert.equal(sourceOf.get(pages[2]!.id), 'docs/reference/index.md');

  for (const [title, file] of [
    ['Installation', 'docs/getting-started.md'],
    ['Creating your site', 'docs/creating-your-site.md'],
    ['Admonitions', 'docs/reference/admonitions.md'],
    ['Content tabs', 'docs/reference/content-tabs.md'],
  ] as const) {
    const text = source('material', file);
    const { blocks } = await documentOf(admin, space.id, title === 'Installation' ? installation.id : findPage(pages, title).id);
    assert.equal(count(blocks, 'code'), sourceFences(text).length, `${title}: code blocks`);
    const admonitions = outsideCode(text, /^\s*!!!\s+[\w-]+/);
    const collapsibles = outsideCode(text, /^\s*\?\?\?\+?\s+[\w-]+/);
    assert.ok(count(blocks, 'hint') >= admonitions, `${title}: ${count(blocks, 'hint')} hints for ${admonitions} admonitions`);
    assert.ok(count(blocks, 'expandable') >= collapsibles, `${title}: ${count(blocks, 'expandable')} expandables for ${collapsibles} collapsibles`);
  }
  // Content tabs: the five sets outside its code examples (one of empty tabs, one in a <div markdown> result, one in an admonition).
  const tabs = await documentOf(admin, space.id, findPage(pages, 'Content tabs').id);
  assert.equal(count(tabs.blocks, 'tabs'), 5);
  const install = await documentOf(admin, space.id, installation.id);
  assert.ok(count(install.blocks, 'tabs') >= 1);

  // Material writes links by reference ([installation methods]: getting-started.md#installation): page links.
  const creating = await documentOf(admin, space.id, findPage(pages, 'Creating your site').id);
  assert.ok(creating.linkedPages.includes(installation.id), JSON.stringify(creating.linkedPages));
  // Its links to pages outside the sample stay as written, each with a warning.
  assert.ok(run.warnings.some((w) => w.page === 'docs/creating-your-site.md' && /publishing-your-site\.md/.test(w.message)), JSON.stringify(run.warnings));
});
