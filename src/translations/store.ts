import { sql } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { GlossaryEntryRow, TranslationRow, TranslationStats } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of translations, their page mappings, the translation memory and the glossary.
 * Translations, memory and glossary are found within an organization. A run's job names only its
 * translation, so it claims the translation by id and goes on with the organization of the row;
 * page mappings are reached through a translation found first. Spaces and users are read by id
 * (a translation's result space may have been transferred to another organization since).
 */

// ---------------------------------------------------------------- translations

export async function listTranslations(db: Db, organizationId: string, page: PageRequest) {
  const base = db.selectFrom('translations').selectAll().where('organization_id', '=', organizationId);
  return paginate(base, { kind: 'translations', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
}

export async function findTranslation(db: Db, organizationId: string, id: string): Promise<TranslationRow | undefined> {
  return db.selectFrom('translations').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

/** The translation, locked against other changes until the transaction ends. */
export async function lockTranslation(db: Db, organizationId: string, id: string): Promise<TranslationRow | undefined> {
  return db.selectFrom('translations').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
}

export interface NewTranslation {
  sourceSpaceId: string;
  sourceLanguage: string;
  language: string;
  instructions: unknown;
  stats: TranslationStats;
  createdBy: string;
}

export async function insertTranslation(db: Db, organizationId: string, translation: NewTranslation): Promise<TranslationRow> {
  const now = new Date();
  return db
    .insertInto('translations')
    .values({
      id: newId(),
      organization_id: organizationId,
      source_space_id: translation.sourceSpaceId,
      source_language: translation.sourceLanguage,
      language: translation.language,
      instructions: translation.instructions === null ? null : json(translation.instructions),
      status: 'pending',
      error: null,
      failed_at: null,
      queued: false,
      rerun: false,
      result_space_id: null,
      result_revision: null,
      last_source_root: null,
      last_settings: null,
      stats: json(translation.stats) as unknown as TranslationStats,
      created_by: translation.createdBy,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setInstructions(db: Db, organizationId: string, id: string, instructions: unknown): Promise<TranslationRow | undefined> {
  return db
    .updateTable('translations')
    .set({ instructions: json(instructions), updated_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a translation; false when there was none. */
export async function deleteTranslation(db: Db, organizationId: string, id: string): Promise<boolean> {
  const deleted = await db.deleteFrom('translations').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}

/** A queued or running job of a type for a translation (its payload names it). */
export async function liveRunJob(db: Db, type: string, translationId: string): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('jobs')
    .select('id')
    .where('type', '=', type)
    .where('status', 'in', ['queued', 'running'])
    .where(sql<string>`payload->>'translation'`, '=', translationId)
    .executeTakeFirst();
}

/** Run-state columns of a translation, as a run request, a run or its end sets them. */
export type RunState = Partial<Pick<TranslationRow, 'status' | 'error' | 'failed_at' | 'queued' | 'rerun' | 'updated_at' | 'result_space_id' | 'result_revision' | 'last_source_root' | 'last_settings'>> & {
  stats?: TranslationStats;
};

export async function setRunState(db: Db, organizationId: string, id: string, state: RunState): Promise<void> {
  const { stats, ...columns } = state;
  await db
    .updateTable('translations')
    .set({ ...columns, ...(stats !== undefined ? { stats: json(stats) as unknown as TranslationStats } : {}) })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .execute();
}

/** Marks a translation running for the job that names it; undefined when it was deleted since. */
export async function claimTranslationRun(db: Db, translationId: string): Promise<TranslationRow | undefined> {
  return db.updateTable('translations').set({ status: 'running', queued: false, updated_at: new Date() }).where('id', '=', translationId).returningAll().executeTakeFirst();
}

// ---------------------------------------------------------------- what a run reads besides its translation

export async function findUser(db: Db, userId: string) {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
}

/** Whether a space still exists and is not deleted. */
export async function spaceState(db: Db, spaceId: string) {
  return db.selectFrom('spaces').select(['id', 'deleted_at']).where('id', '=', spaceId).executeTakeFirst();
}

export async function spaceRevision(db: Db, spaceId: string): Promise<string> {
  return (await db.selectFrom('spaces').select('revision_id').where('id', '=', spaceId).executeTakeFirstOrThrow()).revision_id;
}

// ---------------------------------------------------------------- page mappings

export async function pageMappings(db: Db, translationId: string) {
  return db.selectFrom('translation_pages').select(['source_page_id', 'target_page_id']).where('translation_id', '=', translationId).execute();
}

export async function countPageMappings(db: Db, translationId: string): Promise<number> {
  const row = await db.selectFrom('translation_pages').select((eb) => eb.fn.countAll<number>().as('n')).where('translation_id', '=', translationId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Forgets every page mapping of a translation (its target space is new). */
export async function clearPageMappings(db: Db, translationId: string): Promise<void> {
  await db.deleteFrom('translation_pages').where('translation_id', '=', translationId).execute();
}

/** Forgets the mappings of removed source pages, 500 a statement. */
export async function deletePageMappings(db: Db, translationId: string, sourcePageIds: string[]): Promise<void> {
  for (let i = 0; i < sourcePageIds.length; i += 500) {
    await db.deleteFrom('translation_pages').where('translation_id', '=', translationId).where('source_page_id', 'in', sourcePageIds.slice(i, i + 500)).execute();
  }
}

/** Writes page mappings (with the source document each was made from), 500 a statement. */
export async function upsertPageMappings(db: Db, translationId: string, pages: { source: string; target: string; fingerprint: string | null }[]): Promise<void> {
  const rows = pages.map((p) => ({ translation_id: translationId, source_page_id: p.source, target_page_id: p.target, fingerprint: p.fingerprint }));
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('translation_pages')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.columns(['translation_id', 'source_page_id']).doUpdateSet((eb) => ({ target_page_id: eb.ref('excluded.target_page_id'), fingerprint: eb.ref('excluded.fingerprint') })))
      .execute();
  }
}

/** Target pages translated from a source document, in source page order. */
export async function targetPagesOfDocument(db: Db, translationId: string, document: string) {
  return db.selectFrom('translation_pages').select('target_page_id').where('translation_id', '=', translationId).where('fingerprint', '=', document).orderBy('source_page_id').execute();
}

// ---------------------------------------------------------------- translation memory

/** Translations of source segments (by hash) for one language and instructions, 1,000 hashes a query. */
export async function memoryLookup(db: Db, organizationId: string, language: string, instructionsHash: string, hashes: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < hashes.length; i += 1000) {
    const rows = await db
      .selectFrom('translation_memory')
      .select(['source_hash', 'translation'])
      .where('organization_id', '=', organizationId)
      .where('language', '=', language)
      .where('instructions_hash', '=', instructionsHash)
      .where('source_hash', 'in', hashes.slice(i, i + 1000))
      .execute();
    for (const r of rows) out.set(r.source_hash, r.translation);
  }
  return out;
}

/** Remembers translated segments, 500 a statement. */
export async function memoryStore(db: Db, organizationId: string, language: string, instructionsHash: string, entries: { hash: string; translation: string }[], now: Date): Promise<void> {
  const rows = entries.map((e) => ({ organization_id: organizationId, source_hash: e.hash, language, instructions_hash: instructionsHash, translation: e.translation, created_at: now }));
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('translation_memory')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.columns(['organization_id', 'source_hash', 'language', 'instructions_hash']).doUpdateSet((eb) => ({ translation: eb.ref('excluded.translation') })))
      .execute();
  }
}

// ---------------------------------------------------------------- glossary

/** Glossary entries, in insertion order or (`orderBy`, a language) by their term in that language. */
export async function listGlossary(db: Db, organizationId: string, orderBy: string | undefined, page: PageRequest) {
  const base = db.selectFrom('glossary_entries').selectAll().where('organization_id', '=', organizationId);
  if (orderBy) {
    const language = orderBy;
    const expr = sql<string>`coalesce(translations->>${language}, '')`;
    return paginate(base, { kind: `glossary:${language}`, sortExpr: expr, sortType: 'text', seqExpr: sql.ref('seq'), direction: 'asc' }, page, (r) => r.translations[language] ?? '');
  }
  return paginate(base, { kind: 'glossary', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
}

export async function findGlossaryEntry(db: Db, organizationId: string, id: string): Promise<GlossaryEntryRow | undefined> {
  return db.selectFrom('glossary_entries').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export async function glossaryEntryExists(db: Db, organizationId: string, id: string): Promise<boolean> {
  return !!(await db.selectFrom('glossary_entries').select('id').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst());
}

export async function insertGlossaryEntry(db: Db, organizationId: string, translations: Record<string, string>, now: Date): Promise<void> {
  await db
    .insertInto('glossary_entries')
    .values({ id: newId(), organization_id: organizationId, translations: json(translations) as unknown as Record<string, string>, created_at: now, updated_at: now })
    .execute();
}

export async function updateGlossaryEntry(db: Db, organizationId: string, id: string, translations: Record<string, string>, now: Date): Promise<void> {
  await db
    .updateTable('glossary_entries')
    .set({ translations: json(translations) as unknown as Record<string, string>, updated_at: now })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .execute();
}

export async function deleteGlossaryEntry(db: Db, organizationId: string, id: string): Promise<void> {
  await db.deleteFrom('glossary_entries').where('organization_id', '=', organizationId).where('id', '=', id).execute();
}

/** The terms of every glossary entry of the organization. */
export async function glossaryTranslations(db: Db, organizationId: string): Promise<Record<string, string>[]> {
  return (await db.selectFrom('glossary_entries').select('translations').where('organization_id', '=', organizationId).execute()).map((r) => r.translations);
}
