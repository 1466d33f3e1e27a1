/**
 * Benchmark: merging a one-page change must cost the same in a space of 1,000 pages as in one of
 * 10,000 (issue 4: cost grows with the change, not with the space). Both spaces are built in the
 * same run, straight through the content model (one commit each), then every round goes through
 * the real HTTP path, alternating between the two spaces:
 *
 *   create two change requests; update_page one page in each (timed: edit);
 *   merge the first (timed: fast-forward merge, the space has not moved since its base);
 *   merge the second (timed: three-way merge, the space moved: base, space and head are merged).
 *
 * Prints p50/p95 of each after warm-up, the ratio 10,000/1,000 of the p50s (goal: under 1.5),
 * and how many tree nodes a three-way merge stores.
 *
 *   node --import tsx bench/merge.ts                                    # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… node --import tsx bench/merge.ts    # PostgreSQL
 *   BENCH_ROUNDS=40 BENCH_WARMUP=5                                      # rounds per space
 */
import { generateNKeysBetween } from 'fractional-indexing';
import { ContentEditor, EMPTY, putDocuments, type PageEntry } from '../src/content/model.ts';
import { countTreeNodes } from '../src/content/store.ts';
import { loadConfig } from '../src/platform/config.ts';
import { json, type Db } from '../src/platform/db/database.ts';
import { newId } from '../src/platform/ids.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { apiCaller, freshDatabaseConfig, percentile } from './support.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const SIZES = [1_000, 10_000];


/**
 * Writes `count` pages into a space as one new revision: 10 sections of 10 chapters, the pages
 * spread evenly below the chapters (a realistic shape: no parent has thousands of children).
 * Returns the ids of the leaf pages, grouped by section.
 */
async function fillSpace(db: Db, space: { id: string; organization_id: string; revision_id: string }, count: number, userId: string): Promise<string[][]> {
  const editor = new ContentEditor(db, EMPTY);
  const now = new Date().toISOString();
  const children = new Map<string | null, string[]>();
  const markdowns: string[] = [];
  const entries: Omit<PageEntry, 'doc'>[] = [];
  const add = (parent: string | null, title: string, slug: string) => {
    const id = newId();
    entries.push({ id, type: 'document', title, slug, parent, pos: '', createdAt: now, updatedAt: now });
    markdowns.push(`${title}: the first paragraph of this page.\n\nA second paragraph, with **bold** text and a [link](https://example.com).\n\n- a list\n- of items\n`);
    children.set(parent, [...(children.get(parent) ?? []), id]);
    return id;
  };
  const leaves: string[][] = [];
  const sections = Array.from({ length: 10 }, (_, s) => add(null, `Section ${s}`, `section-${s}`));
  const chapters = sections.flatMap((section, s) => Array.from({ length: 10 }, (_, c) => add(section, `Chapter ${s}.${c}`, `chapter-${c}`)));
  for (let i = 0; entries.length < count; i++) {
    const chapter = chapters[i % chapters.length]!;
    const id = add(chapter, `Page ${i}`, `page-${i}`);
    (leaves[Math.floor((i % chapters.length) / 10)] ??= []).push(id);
  }
  const docs = await putDocuments(db, null, markdowns);
  const byId = new Map(entries.map((e, i) => [e.id, { ...e, doc: docs[i]! }]));
  for (const [parent, ids] of children) {
    const keys = generateNKeysBetween(null, null, ids.length);
    ids.forEach((id, i) => editor.putPage({ ...byId.get(id)!, pos: keys[i]! }));
    await editor.setChildren(parent, ids);
  }
  const root = await editor.commit(db);
  const revision = newId();
  await db
    .insertInto('revisions')
    .values({ id: revision, space_id: space.id, organization_id: space.organization_id, parents: json([space.revision_id]), type: 'edits', root, created_by: userId, created_at: new Date(), message: null })
    .execute();
  await db.updateTable('spaces').set({ revision_id: revision }).where('id', '=', space.id).execute();
  return leaves;
}


async function main() {
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer({ ...loadConfig({}), port: 0, logLevel: 'silent', rateLimitMax: 1e9, databaseUrl: undefined, ...db.config }, { purpose: 'bench' });
  try {
    const store = server.services.db;
    const { user, token } = await createUser(store, { email: `bench.${Date.now()}@example.com`, name: 'Bench' });
    const call = apiCaller(server.url, token);
    const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
      const start = performance.now();
      const out = await fn();
      return [out, performance.now() - start];
    };

    const org = await call('POST', '/v1/orgs', { title: 'Bench' });
    const spaces = new Map<number, { id: string; leaves: string[][] }>();
    for (const size of SIZES) {
      const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: `${size} pages` });
      const row = await store.selectFrom('spaces').select(['id', 'organization_id', 'revision_id']).where('id', '=', space.id).executeTakeFirstOrThrow();
      const [leaves, ms] = await timed(() => fillSpace(store, row, size, user.id));
      console.log(`built a space of ${size} pages in ${(ms / 1000).toFixed(1)} s`);
      spaces.set(size, { id: space.id, leaves });
    }
    // Sanity: the space reads back with its pages.
    for (const [size, { id }] of spaces) {
      const { pages } = await call<{ pages: { pages: unknown[] }[] }>('GET', `/v1/spaces/${id}/content/pages`);
      if (pages.length !== 10 || pages[0]!.pages.length !== 10) throw new Error(`the space of ${size} pages does not read back`);
    }

    const results = new Map(SIZES.map((size) => [size, { edit: [] as number[], fastForward: [] as number[], threeWay: [] as number[], nodes: [] as number[] }]));
    const edit = (spaceId: string, crId: string, page: string, round: number) =>
      call('POST', `/v1/spaces/${spaceId}/change-requests/${crId}/content`, {
        changes: [{ operation: 'update_page', page, document: { markdown: `Edited in round ${round}.\n\nA second paragraph.\n` } }],
      });
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      // Alternate the spaces so that drift (caches, the database warming up) affects both alike.
      for (const size of SIZES) {
        const { id, leaves } = spaces.get(size)!;
        // Two pages in different sections: the merges never conflict.
        const section = round % 5;
        const pageA = leaves[section]![(round * 7) % leaves[section]!.length]!;
        const pageB = leaves[section + 5]![(round * 13) % leaves[section + 5]!.length]!;
        const first = await call('POST', `/v1/spaces/${id}/change-requests`, { subject: `A ${round}` });
        const second = await call('POST', `/v1/spaces/${id}/change-requests`, { subject: `B ${round}` });
        const [, editA] = await timed(() => edit(id, first.id, pageA, round));
        const [, editB] = await timed(() => edit(id, second.id, pageB, round));
        const [ff, fastForward] = await timed(() => call('POST', `/v1/spaces/${id}/change-requests/${first.id}/merge`));
        const before = await countTreeNodes(store);
        const [merged, threeWay] = await timed(() => call('POST', `/v1/spaces/${id}/change-requests/${second.id}/merge`));
        const nodes = (await countTreeNodes(store)) - before;
        if (ff.result !== 'merge' || merged.result !== 'merge') throw new Error(`round ${round}: unexpected merge results ${ff.result}, ${merged.result}`);
        if (round >= WARMUP) {
          const r = results.get(size)!;
          r.edit.push(editA, editB);
          r.fastForward.push(fastForward);
          r.threeWay.push(threeWay);
          r.nodes.push(nodes);
        }
      }
    }

    const engine = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
    console.log(`\nMerging a one-page change request into spaces of 1,000 and 10,000 pages`);
    console.log(`engine: ${engine}; ${ROUNDS} rounds per space after ${WARMUP} warm-up, spaces alternated\n`);
    console.log('case'.padEnd(50) + 'p50 ms'.padStart(10) + 'p95 ms'.padStart(10));
    const cases = [
      ['edit', 'update_page (one page)'],
      ['fastForward', 'merge, space unchanged since the base'],
      ['threeWay', 'merge, three-way (the space moved)'],
    ] as const;
    for (const size of SIZES) {
      for (const [key, label] of cases) {
        const sorted = [...results.get(size)![key]].sort((a, b) => a - b);
        console.log(`${size} pages: ${label}`.padEnd(50) + percentile(sorted, 50).toFixed(2).padStart(10) + percentile(sorted, 95).toFixed(2).padStart(10));
      }
    }
    console.log('');
    for (const [key, label] of cases) {
      const p50 = (size: number) => percentile([...results.get(size)![key]].sort((a, b) => a - b), 50);
      const ratio = p50(10_000) / p50(1_000);
      console.log(`ratio p50 10,000/1,000, ${label}: ${ratio.toFixed(2)}`.padEnd(78) + `goal < 1.5 (${ratio < 1.5 ? 'met' : 'NOT met'})`);
    }
    for (const size of SIZES) {
      const nodes = [...results.get(size)!.nodes].sort((a, b) => a - b);
      console.log(`tree nodes stored by a three-way merge into ${size} pages: p50 ${percentile(nodes, 50)}, max ${nodes[nodes.length - 1]}`);
    }
  } finally {
    await server.close();
    await db.cleanup();
  }
}

await main();
