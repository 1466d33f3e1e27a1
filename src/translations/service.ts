import { createHash } from 'node:crypto';
import { normalizeDocumentInput } from '../content/convert.ts';
import { requireMembership } from '../access/organizations.ts';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { GlossaryEntryRow, TranslationStats } from '../platform/db/schema.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { atLeast, type Membership } from '../platform/policy.ts';
import { loadSpace } from '../spaces/access.ts';
import { LANGUAGES } from '../spaces/schemas.ts';
import type { CreateTranslationInput, GlossaryOperationInput, GlossaryTranslationsInput } from './schemas.ts';
import * as store from './store.ts';

export const TRANSLATION_RUN_JOB = 'translation.run';

export const ZERO_STATS: TranslationStats = { runs: 0, totalWords: 0, totalPages: 0, totalDuration: 0, latestRunDuration: 0, latestPages: 0, latestWords: 0 };

/** Members with a role (not guests) see the organization's translations and glossary. */
export function canViewTranslations(m: Membership): boolean {
  return m.role !== null;
}

/** Members who can create spaces manage translations (each makes and fills a space) and the glossary. */
export function canEditTranslations(m: Membership): boolean {
  return atLeast(m.role, 'create');
}

async function viewer(ctx: Ctx, organizationId: string): Promise<Membership> {
  const m = await requireMembership(ctx, organizationId);
  if (!canViewTranslations(m)) throw new ForbiddenError('Guests cannot see the translations of the organization');
  return m;
}

async function editor(ctx: Ctx, organizationId: string, action: string): Promise<Membership> {
  const m = await viewer(ctx, organizationId);
  if (!canEditTranslations(m)) throw new ForbiddenError(`Only members with the create or admin role can ${action}`);
  return m;
}

export function sha(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

export function instructionsHash(instructions: unknown): string {
  return sha(JSON.stringify(instructions ?? null));
}

export async function listTranslations(ctx: Ctx, organizationId: string, page: PageRequest) {
  const membership = await viewer(ctx, organizationId);
  const result = await store.listTranslations(ctx.db, organizationId, page);
  return { membership, ...result };
}

export async function getTranslation(ctx: Ctx, organizationId: string, id: string) {
  const membership = await viewer(ctx, organizationId);
  const row = await store.findTranslation(ctx.db, organizationId, id);
  if (!row) throw new NotFoundError('Translation');
  return { membership, row };
}

export async function createTranslation(ctx: Ctx, organizationId: string, input: CreateTranslationInput) {
  const membership = await editor(ctx, organizationId, 'create translations');
  if (input.source.language === input.language) {
    throw new BadRequestError(`language: the translation's language must differ from the source language ("${input.language}")`);
  }
  const source = await loadSpace(ctx, input.source.space).catch((err) => {
    if (err instanceof NotFoundError) throw new BadRequestError(`source.space: space "${input.source.space}" does not exist or you cannot read it`);
    throw err;
  });
  if (source.space.organization_id !== organizationId) {
    throw new BadRequestError(`source.space: space "${input.source.space}" is not in this organization`);
  }
  const instructions = input.instructions !== undefined ? await normalizeDocumentInput(input.instructions, 'instructions') : null;
  const row = await store.insertTranslation(ctx.db, organizationId, {
    sourceSpaceId: source.space.id,
    sourceLanguage: input.source.language,
    language: input.language,
    instructions,
    stats: ZERO_STATS,
    createdBy: ctx.user.id,
  });
  return { membership, row };
}

export async function updateTranslation(ctx: Ctx, organizationId: string, id: string, instructionsInput: unknown) {
  const membership = await editor(ctx, organizationId, 'change translations');
  if (!(await store.findTranslation(ctx.db, organizationId, id))) throw new NotFoundError('Translation');
  const instructions = await normalizeDocumentInput(instructionsInput, 'instructions');
  const row = await store.setInstructions(ctx.db, organizationId, id, instructions);
  if (!row) throw new NotFoundError('Translation');
  return { membership, row };
}

/** Deletes a translation (its target space stays); false when there was none. */
export async function deleteTranslation(ctx: Ctx, organizationId: string, id: string): Promise<boolean> {
  await editor(ctx, organizationId, 'delete translations');
  return store.deleteTranslation(ctx.db, organizationId, id);
}

/**
 * Asks for a run. One run at a time per translation: a request while a run is queued changes
 * nothing, a request while one runs is remembered and starts when it ends.
 */
export async function runTranslation(ctx: Ctx, organizationId: string, id: string): Promise<void> {
  await editor(ctx, organizationId, 'run translations');
  await ctx.db.transaction().execute(async (trx) => {
    const row = await store.lockTranslation(trx, organizationId, id);
    if (!row) throw new NotFoundError('Translation');
    // A run marked queued or running whose job is gone (its worker died past its last attempt)
    // must not block runs forever: then a new job is queued.
    const live = await store.liveRunJob(trx, TRANSLATION_RUN_JOB, row.id);
    if (live && row.queued) return;
    if (live && row.status === 'running') {
      await store.setRunState(trx, organizationId, row.id, { rerun: true });
      return;
    }
    await ctx.jobs.enqueue(TRANSLATION_RUN_JOB, { translation: row.id }, { db: trx });
    await store.setRunState(trx, organizationId, row.id, { queued: true, status: 'pending', updated_at: new Date() });
  });
}

// --- Glossary ---

const LANGUAGE_SET = new Set<string>(LANGUAGES);

function checkTranslations(translations: GlossaryTranslationsInput, field: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [language, term] of Object.entries(translations)) {
    if (!LANGUAGE_SET.has(language)) throw new BadRequestError(`${field}: "${language}" is not a translation language (one of ${LANGUAGES.join(', ')})`);
    const trimmed = term.trim();
    if (!trimmed) throw new BadRequestError(`${field}.${language}: a term cannot be blank`);
    out[language] = trimmed;
  }
  if (!Object.keys(out).length) throw new BadRequestError(`${field}: give the term in at least one language`);
  return out;
}

export async function listGlossary(ctx: Ctx, organizationId: string, query: PageRequest & { orderBy?: string | undefined }) {
  await viewer(ctx, organizationId);
  return store.listGlossary(ctx.db, organizationId, query.orderBy, query);
}

export async function getGlossaryEntry(ctx: Ctx, organizationId: string, id: string): Promise<GlossaryEntryRow> {
  await viewer(ctx, organizationId);
  const row = await store.findGlossaryEntry(ctx.db, organizationId, id);
  if (!row) throw new NotFoundError('Glossary entry');
  return row;
}

/** Applies a batch of glossary operations, all or nothing. */
export async function updateGlossary(ctx: Ctx, organizationId: string, operations: GlossaryOperationInput[]): Promise<void> {
  await editor(ctx, organizationId, 'change the glossary');
  const checked = operations.map((op, i) => (op.type === 'delete' ? op : { ...op, translations: checkTranslations(op.translations, `operations[${i}].translations`) }));
  await ctx.db.transaction().execute(async (trx) => {
    const now = new Date();
    for (const [i, op] of checked.entries()) {
      if (op.type === 'insert') {
        await store.insertGlossaryEntry(trx, organizationId, op.translations, now);
        continue;
      }
      if (!(await store.glossaryEntryExists(trx, organizationId, op.id))) throw new BadRequestError(`operations[${i}] (${op.type}): glossary entry "${op.id}" not found`);
      if (op.type === 'delete') await store.deleteGlossaryEntry(trx, organizationId, op.id);
      else await store.updateGlossaryEntry(trx, organizationId, op.id, op.translations, now);
    }
  });
}

/** The glossary of one language pair: fixed translations, and do-not-translate terms (one language only). */
export async function glossaryTerms(db: Db, organizationId: string, source: string, target: string) {
  const entries = await store.glossaryTranslations(db, organizationId);
  const terms: { source: string; target: string }[] = [];
  for (const translations of entries) {
    const from = translations[source];
    if (!from) continue;
    const to = translations[target] ?? (Object.keys(translations).length === 1 ? from : undefined);
    if (to) terms.push({ source: from, target: to });
  }
  return terms.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
}

