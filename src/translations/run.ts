import { editChangeRequestTree } from '../change-requests/edit.ts';
import { mergeChangeRequest } from '../change-requests/merge.ts';
import { createChangeRequest, updateChangeRequest } from '../change-requests/service.ts';
import { documentToMarkdown, markdownToDocument } from '../content/markdown/markdown.ts';
import { ContentReader, fileKey, getDocuments, putDocuments, VARIABLES_KEY, type FileEntry, type PageEntry, type ReusableContentEntry } from '../content/model.ts';
import { loadRevision } from '../content/service.ts';
import type { Ctx, Services } from '../platform/context.ts';
import type { TranslationRow, TranslationStats } from '../platform/db/schema.ts';
import { HttpError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Value } from '../content/tree.ts';
import { createSpace } from '../spaces/service.ts';
import { loadSpace } from '../spaces/access.ts';
import { engineFromConfig, EngineError, type Engine, type EngineOptions } from './engines.ts';
import { documentSlots, protectTerms, remapPageRefs, termPattern, wordCount, type Slot } from './segments.ts';
import { glossaryTerms, instructionsHash, sha, TRANSLATION_RUN_JOB, ZERO_STATS } from './service.ts';
import * as store from './store.ts';

/** Titles of target spaces: the language's own name. */
const LANGUAGE_TITLES: Record<string, string> = {
  en: 'English', fr: 'Français', de: 'Deutsch', es: 'Español', it: 'Italiano', pt: 'Português', 'pt-br': 'Português (Brasil)',
  ru: 'Русский', ja: '日本語', zh: '简体中文', 'zh-tw': '繁體中文', yue: '粵語', ko: '한국어', ar: 'العربية', hi: 'हिन्दी',
  nl: 'Nederlands', pl: 'Polski', tr: 'Türkçe', sv: 'Svenska', no: 'Norsk', da: 'Dansk', fi: 'Suomi', el: 'Ελληνικά',
  cs: 'Čeština', hu: 'Magyar', ro: 'Română', th: 'ไทย', vi: 'Tiếng Việt', id: 'Bahasa Indonesia', ms: 'Bahasa Melayu',
  he: 'עברית', uk: 'Українська', sk: 'Slovenčina', bg: 'Български', hr: 'Hrvatski', lt: 'Lietuvių', lv: 'Latviešu',
  et: 'Eesti', sl: 'Slovenščina',
};

/** A failure of a run, explained in words for the translation's `error`. */
class RunError extends Error {}

/** The job handler of translation runs (`engineOptions`: batching and retry timing, for tests). */
export function translationRunJob(services: Services, engineOptions: EngineOptions = {}) {
  return async (payload: { translation: string }) => {
    const claimed = await store.claimTranslationRun(services.db, payload.translation);
    if (!claimed) return; // deleted since it was queued
    const started = Date.now();
    let outcome: RunOutcome | undefined;
    let failure: string | undefined;
    try {
        outcome = await performRun(services, claimed, engineOptions);
    } catch (err) {
      failure = describe(err);
      services.jobs.logger?.warn({ translation: claimed.id, err: failure }, 'translation run failed');
    }
    const seconds = Math.round((Date.now() - started) / 1000);
    await services.db.transaction().execute(async (trx) => {
      const row = await store.lockTranslation(trx, claimed.organization_id, claimed.id);
      if (!row) return;
      const previous = { ...ZERO_STATS, ...row.stats };
      const stats: TranslationStats = {
        runs: previous.runs + 1,
        totalWords: previous.totalWords + (outcome?.words ?? 0),
        totalPages: outcome?.uniquePages ?? previous.totalPages,
        totalDuration: previous.totalDuration + seconds,
        latestRunDuration: seconds,
        latestPages: outcome?.pages ?? 0,
        latestWords: outcome?.words ?? 0,
      };
      const rerun = row.rerun;
      if (rerun) await services.jobs.enqueue(TRANSLATION_RUN_JOB, { translation: row.id }, { db: trx });
      await store.setRunState(trx, row.organization_id, row.id, {
        stats,
        status: rerun || failure ? 'pending' : 'completed',
        error: failure ?? null,
        failed_at: failure ? new Date() : null,
        rerun: false,
        queued: rerun,
        updated_at: new Date(),
      });
    });
  };
}

function describe(err: unknown): string {
  if (err instanceof EngineError) return `Translation engine: ${err.message}`;
  if (err instanceof RunError || err instanceof HttpError) return err.message;
  return `Internal error: ${err instanceof Error ? err.message : String(err)}`;
}

interface RunOutcome {
  words: number;
  pages: number;
  uniquePages: number;
}

interface PageWork {
  source: PageEntry;
  targetId: string;
  title: Slot[];
  description: Slot[];
  body?: { doc: ReturnType<typeof markdownToDocument>; slots: Slot[] };
  out: { title: string; description?: string };
}

async function performRun(services: Services, row: TranslationRow, engineOptions: EngineOptions): Promise<RunOutcome> {
  const { db } = services;
  const engine: Engine = engineFromConfig(services.config, engineOptions);
  if (!row.created_by) throw new RunError('The member who created the translation no longer exists: create it again');
  const user = await store.findUser(db, row.created_by);
  if (!user) throw new RunError('The member who created the translation no longer exists: create it again');
  const ctx: Ctx = { ...services, user };
  const source = await loadSpace(ctx, row.source_space_id).catch(() => {
    throw new RunError('The source space no longer exists, or the member who created the translation can no longer read it');
  });

  // The target space: made by the first run (and again if it was deleted), next to the source.
  let targetId = row.result_space_id;
  let fresh = false;
  if (targetId) {
    const target = await store.spaceState(db, targetId);
    if (!target || target.deleted_at) targetId = null;
  }
  if (!targetId) {
    const { space } = await createSpace(ctx, row.organization_id, {
      title: LANGUAGE_TITLES[row.language] ?? row.language,
      language: row.language as never,
      ...(source.space.parent_id ? { parent: source.space.parent_id } : {}),
    });
    targetId = space.id;
    fresh = true;
    await store.clearPageMappings(db, row.id);
    await store.setRunState(db, row.organization_id, row.id, { result_space_id: space.id, result_revision: space.revision_id, last_source_root: null, last_settings: null });
  }

  const terms = await glossaryTerms(db, row.organization_id, row.source_language, row.language);
  const instrHash = instructionsHash(row.instructions);
  const settings = sha(JSON.stringify([row.source_language, row.language, instrHash, terms]));
  const root = (await loadRevision(db, source.space.id, source.space.revision_id)).root;
  const reader = new ContentReader(db, root);

  // What changed since the last run: a tree diff (cost follows the change), or everything when
  // the settings (language, instructions, glossary) changed or the target is new.
  const incremental = !fresh && row.last_source_root !== null && row.last_settings === settings;
  const changes: [string, Value | undefined, Value | undefined][] = incremental
    ? await reader.tree.diff(row.last_source_root!, root)
    : [...(await reader.tree.entries(root))].map(([key, value]) => [key, undefined, value]);

  const mappingRows = await store.pageMappings(db, row.id);
  const mapping = new Map(mappingRows.map((r) => [r.source_page_id, r.target_page_id]));
  const changedPages: PageEntry[] = [];
  const removedPages: string[] = [];
  const reusable: ReusableContentEntry[] = [];
  const removedReusable: string[] = [];
  const fileChanges: [string, FileEntry | undefined][] = [];
  let variables: [Value | undefined] | undefined;
  const present = new Set<string>();
  for (const [key, , after] of changes) {
    if (key.startsWith('p:')) {
      if (after) {
        changedPages.push(after as PageEntry);
        present.add(key.slice(2));
      } else removedPages.push(key.slice(2));
    } else if (key.startsWith('r:')) {
      if (after) reusable.push(after as ReusableContentEntry);
      else removedReusable.push(key.slice(2));
    } else if (key.startsWith('f:')) fileChanges.push([key.slice(2), after as FileEntry | undefined]);
    else if (key === VARIABLES_KEY) variables = [after];
  }
  // A full pass also removes the target pages whose source page is gone.
  if (!incremental) for (const sourceId of mapping.keys()) if (!present.has(sourceId)) removedPages.push(sourceId);
  for (const page of changedPages) if (!mapping.has(page.id)) mapping.set(page.id, newId());
  const mapPage = (id: string) => mapping.get(id);

  // Slots of every changed page and reusable content, from their JSON documents.
  const docs = await getDocuments(db, [...changedPages.map((p) => p.doc ?? ''), ...reusable.map((r) => r.doc ?? '')]);
  const slotsOf = (text: string | undefined, set: (v: string) => void): Slot[] => {
    if (!text || !/\p{L}/u.test(text)) return [];
    const match = /^(\s*)([\s\S]*?)(\s*)$/.exec(text)!;
    return [{ text: match[2]!, set: (v) => set(`${match[1]}${v}${match[3]}`) }];
  };
  const work: PageWork[] = changedPages.map((page) => {
    const item: PageWork = { source: page, targetId: mapping.get(page.id)!, title: [], description: [], out: { title: page.title, ...(page.description !== undefined ? { description: page.description } : {}) } };
    item.title = slotsOf(page.title, (v) => (item.out.title = v));
    item.description = slotsOf(page.description, (v) => (item.out.description = v));
    const markdown = page.doc ? docs.get(page.doc) : undefined;
    if (markdown !== undefined) {
      const doc = markdownToDocument(markdown);
      item.body = { doc, slots: documentSlots(doc) };
    }
    return item;
  });
  const reusableWork = reusable.map((entry) => {
    const item = { entry, title: entry.title, doc: undefined as ReturnType<typeof markdownToDocument> | undefined, slots: [] as Slot[] };
    item.slots.push(...slotsOf(entry.title, (v) => (item.title = v)));
    const markdown = entry.doc ? docs.get(entry.doc) : undefined;
    if (markdown !== undefined) {
      item.doc = markdownToDocument(markdown);
      item.slots.push(...documentSlots(item.doc));
    }
    return item;
  });

  // Glossary terms become placeholders; segments are looked up in the translation memory, and
  // only the missing ones go to the engine.
  const pattern = termPattern(terms);
  const allSlots = [...work.flatMap((w) => [...w.title, ...w.description, ...(w.body?.slots ?? [])]), ...reusableWork.flatMap((r) => r.slots)];
  const prepared = allSlots.map((slot) => {
    const protectedText = protectTerms(slot.text, terms, pattern);
    return { slot, ...protectedText, hash: sha(`${row.source_language}\n${protectedText.text}`) };
  });
  const memory = await store.memoryLookup(db, row.organization_id, row.language, instrHash, [...new Set(prepared.map((p) => p.hash))]);
  const missing = new Map<string, { text: string; words: number }>();
  for (const p of prepared) if (!memory.has(p.hash) && !missing.has(p.hash)) missing.set(p.hash, { text: p.text, words: wordCount(p.slot.text) });
  let words = 0;
  if (missing.size) {
    const hashes = [...missing.keys()];
    const texts = hashes.map((h) => missing.get(h)!.text);
    const instructions = row.instructions ? documentToMarkdown(row.instructions as never).trim() : undefined;
    const translated = await engine.translate(texts, { source: row.source_language, target: row.language, instructions: instructions || undefined });
    const now = new Date();
    await store.memoryStore(
      db,
      row.organization_id,
      row.language,
      instrHash,
      hashes.map((hash, i) => ({ hash, translation: translated[i]! })),
      now,
    );
    hashes.forEach((hash, i) => memory.set(hash, translated[i]!));
    for (const m of missing.values()) words += m.words;
  }
  for (const p of prepared) p.slot.set(p.restore(memory.get(p.hash)!));

  // Target markdown: translated documents, page references pointed at the target's pages.
  const pageMarkdown = work.map((w) => {
    if (!w.body) return null;
    remapPageRefs(w.body.doc, mapPage);
    return documentToMarkdown(w.body.doc);
  });
  const reusableMarkdown = reusableWork.map((r) => {
    if (!r.doc) return null;
    remapPageRefs(r.doc, mapPage);
    return documentToMarkdown(r.doc);
  });

  const anything = work.length || removedPages.length || reusableWork.length || removedReusable.length || fileChanges.length || variables;
  let revision: string | undefined;
  if (anything) {
    const { cr } = await createChangeRequest(ctx, targetId, { subject: `Translation from ${row.source_language} to ${row.language}` });
    try {
      await editChangeRequestTree(ctx, targetId, cr.id, async (trx, editor, space) => {
        for (const [id, file] of fileChanges) editor.setRaw(fileKey(id), file);
        if (variables) editor.setRaw(VARIABLES_KEY, variables[0]);
        for (const sourceId of removedPages) {
          const targetPage = mapping.get(sourceId);
          if (targetPage && (await editor.page(targetPage))) await editor.deletePage(targetPage);
        }
        const hashes = await putDocuments(trx, space.id, pageMarkdown.filter((m): m is string => m !== null));
        let next = 0;
        for (const [i, w] of work.entries()) {
          const doc = pageMarkdown[i] === null ? null : hashes[next++]!;
          const existing = await editor.page(w.targetId);
          const parent = w.source.parent ? (mapping.get(w.source.parent) ?? null) : null;
          const entry: PageEntry = { ...w.source, id: w.targetId, parent, title: w.out.title, doc, createdAt: existing?.createdAt ?? new Date().toISOString(), updatedAt: new Date().toISOString() };
          if (w.out.description !== undefined) entry.description = w.out.description;
          if (existing && existing.parent !== parent) await editor.setChildren(existing.parent, (await editor.childIds(existing.parent)).filter((c) => c !== w.targetId));
          editor.putPage(entry);
          const siblings = await editor.childIds(parent);
          if (!siblings.includes(w.targetId)) await editor.setChildren(parent, [...siblings, w.targetId]);
        }
        for (const id of removedReusable) if (await editor.reusableContent(id)) editor.deleteReusableContent(id);
        const reusableHashes = await putDocuments(trx, space.id, reusableMarkdown.filter((m): m is string => m !== null));
        next = 0;
        for (const [i, r] of reusableWork.entries()) {
          const doc = reusableMarkdown[i] === null ? null : reusableHashes[next++]!;
          editor.putReusableContent({ ...r.entry, title: r.title, doc });
        }
      });
      revision = (await mergeChangeRequest(ctx, targetId, cr.id)).revision;
    } catch (err) {
      // A run that could not finish leaves no open change request behind in the target.
      await updateChangeRequest(ctx, targetId, cr.id, { status: 'archived' }).catch(() => {});
      throw err;
    }
  }

  // Remember the mapping and where the source was, for the next run.
  await db.transaction().execute(async (trx) => {
    const removed = removedPages.filter((id) => !present.has(id));
    await store.deletePageMappings(trx, row.id, removed);
    await store.upsertPageMappings(
      trx,
      row.id,
      work.map((w) => ({ source: w.source.id, target: w.targetId, fingerprint: w.source.doc })),
    );
    const current = revision ?? (await store.spaceRevision(trx, targetId!));
    await store.setRunState(trx, row.organization_id, row.id, { last_source_root: root, last_settings: settings, result_revision: current });
  });
  return { words, pages: work.length, uniquePages: await store.countPageMappings(db, row.id) };
}
