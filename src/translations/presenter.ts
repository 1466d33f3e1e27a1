import type { GlossaryEntryRow, TranslationRow } from '../platform/db/schema.ts';
import type { Membership } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import type { GlossaryEntryResource, TranslationResource } from './schemas.ts';
import { canEditTranslations, canViewTranslations, ZERO_STATS } from './service.ts';

const EMPTY_DOCUMENT = { object: 'document' as const, data: { schemaVersion: 1 }, nodes: [] };

export function presentTranslation(urls: Urls, row: TranslationRow, caller: Membership): TranslationResource {
  return {
    object: 'translation',
    id: row.id,
    status: row.status,
    ...(row.error ? { error: { message: row.error, failedAt: (row.failed_at ?? row.updated_at).toISOString() } } : {}),
    source: { space: row.source_space_id, language: row.source_language as TranslationResource['language'] },
    language: row.language as TranslationResource['language'],
    instructions: (row.instructions as TranslationResource['instructions'] | null) ?? EMPTY_DOCUMENT,
    ...(row.result_space_id && row.result_revision
      ? { result: { space: row.result_space_id, revision: row.result_revision, language: row.language as TranslationResource['language'] } }
      : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    stats: { ...ZERO_STATS, ...row.stats },
    permissions: { view: canViewTranslations(caller), edit: canEditTranslations(caller) },
    urls: { location: urls.api(`/orgs/${encodeURIComponent(row.organization_id)}/translations/${row.id}`) },
  };
}

export function presentGlossaryEntry(urls: Urls, row: GlossaryEntryRow): GlossaryEntryResource {
  return {
    object: 'glossary-entry',
    id: row.id,
    translations: row.translations,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    urls: { location: urls.api(`/orgs/${encodeURIComponent(row.organization_id)}/translations-glossary/${row.id}`) },
  };
}
