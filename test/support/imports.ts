/**
 * What the import tests share: fixture folders as zips, uploads through generateStorageUploadURL,
 * runs started and settled, and the page tree and markdown they leave in a space.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { zipSync } from 'fflate';
import type { TestServer, TestUser } from './server.ts';
import { settleJobs } from './wait.ts';

export const IMPORT_FIXTURES = new URL('../fixtures/imports/', import.meta.url).pathname;

/** Every file under `dir`, by its path relative to it. */
export function folderFiles(dir: string): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(dir, path)] = readFileSync(path);
    }
  };
  walk(dir);
  return out;
}

/** A fixture folder as a zip archive holding one folder (as people zip a folder). */
export function zipFixture(name: string): Buffer {
  const files = folderFiles(join(IMPORT_FIXTURES, name));
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([p, d]) => [`${name}/${p}`, d]))));
}

/** Uploads `bytes` as an import file of the organization; answers its storage key. */
export async function upload(user: TestUser, organizationId: string, name: string, bytes: Buffer, type = 'application/zip'): Promise<string> {
  const { data } = await user.api.orgs.generateStorageUploadUrl(organizationId, { file: { name, type, size: bytes.length }, kind: 'import_file' as never });
  const res = await fetch(data.url, { method: 'PUT', body: new Uint8Array(bytes), headers: { 'content-type': type } });
  assert.equal(res.status, 200);
  return data.key;
}

/** An import run with Folio's additions (progress, warnings, result), which the official schema allows. */
export type Run = Awaited<ReturnType<TestUser['api']['org']['getImportRun']>>['data'] & {
  project?: string;
  progress: { pagesFound: number; pagesConverted: number; pagesFailed: number };
  warnings: { page?: string; message: string }[];
  result?: { revision: string; changeRequest?: string };
};

export async function runOf(user: TestUser, orgId: string, id: string): Promise<Run> {
  return (await user.api.org.getImportRun(orgId, id)).data as Run;
}

/** Starts an import of uploaded files, runs the job queue until idle, answers the run. */
export async function importFiles(t: TestServer, user: TestUser, orgId: string, target: { space: string; changeRequest?: string; page?: string }, keys: string[]): Promise<Run> {
  const { data: started } = await user.api.org.startImportRun(orgId, { source: { type: 'file', files: keys }, target });
  assert.equal(started.status, 'pending');
  await settleJobs(t);
  return runOf(user, orgId, started.id);
}

export type PageNode = { id: string; title: string; type: string; slug?: string; linkTitle?: string; pages?: PageNode[] };

export async function pagesOf(user: TestUser, spaceId: string): Promise<PageNode[]> {
  return (await user.api.spaces.listPages(spaceId)).data.pages as unknown as PageNode[];
}

export async function markdownOf(user: TestUser, spaceId: string, pageId: string): Promise<string> {
  return ((await user.api.spaces.getPageById(spaceId, pageId, { format: 'markdown' } as never)).data as unknown as { markdown: string }).markdown;
}

/** The tree's titles, nested where a page has children. */
export const shape = (pages: PageNode[]): unknown[] => pages.map((p) => (p.pages?.length ? [p.title, shape(p.pages)] : p.title));

/** The first page titled `title`, anywhere in the tree (depth first), if any. */
export function pageTitled(pages: PageNode[], title: string): PageNode | undefined {
  for (const p of pages) {
    if (p.title === title) return p;
    const inner = p.pages ? pageTitled(p.pages, title) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

/** The first page titled `title`, anywhere in the tree; an error naming the tree when there is none. */
export function findPage(pages: PageNode[], title: string): PageNode {
  const found = pageTitled(pages, title);
  if (!found) throw new Error(`no page "${title}" in ${JSON.stringify(shape(pages))}`);
  return found;
}
