import { Type, type Static } from '@sinclair/typebox';
import { PageQuery } from '../platform/paging.ts';
import { asEnum, Document, Timestamp } from '../platform/schemas.ts';
import { LANGUAGES } from '../spaces/schemas.ts';

/** The official translation languages (TranslationLanguage), the same list as space languages. */
export type TranslationLanguageCode = (typeof LANGUAGES)[number];
export const TranslationLanguage = Type.Unsafe<TranslationLanguageCode>({ type: 'string', enum: [...LANGUAGES], description: 'A translation language' });

const EntityId = (description: string) => Type.String({ maxLength: 100, pattern: '^[a-zA-Z0-9_-]+$', description });

export const OrgParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }) });
export const TranslationParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), translationId: EntityId('ID of the translation') });
export const GlossaryEntryParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), glossaryEntryId: EntityId('ID of the glossary entry') });

export const TranslationSource = Type.Object({
  space: Type.String({ maxLength: 100, description: 'ID of the source space' }),
  language: TranslationLanguage,
});

export const Translation = Type.Object({
  object: Type.Literal('translation'),
  id: Type.String({ description: 'Unique identifier of the translation' }),
  status: asEnum(Type.Union([Type.Literal('pending'), Type.Literal('running'), Type.Literal('completed')]), {
    description: 'pending: created, waiting for a run, or the latest run failed (see error); running; completed: the target is up to date with the source as of the latest run',
  }),
  error: Type.Optional(
    Type.Object(
      {
        message: Type.String({ description: 'Why the latest run failed, in words' }),
        failedAt: Timestamp,
      },
      { description: 'Present when the latest run failed' },
    ),
  ),
  source: TranslationSource,
  language: TranslationLanguage,
  instructions: Document,
  result: Type.Optional(
    Type.Object(
      {
        space: Type.String({ description: 'ID of the space holding the translation' }),
        revision: Type.String({ description: 'ID of the revision the latest run produced' }),
        language: TranslationLanguage,
      },
      { description: 'The target space, once the first run created it' },
    ),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  stats: Type.Object({
    runs: Type.Integer({ description: 'Runs so far (failed ones included)' }),
    totalWords: Type.Integer({ description: 'Words sent to the engine over all runs' }),
    totalPages: Type.Integer({ description: 'Unique pages translated over all runs' }),
    totalDuration: Type.Integer({ description: 'Duration of all runs, in seconds' }),
    latestRunDuration: Type.Integer({ description: 'Duration of the latest run, in seconds' }),
    latestPages: Type.Integer({ description: 'Pages written by the latest run' }),
    latestWords: Type.Integer({ description: 'Words sent to the engine by the latest run (translation memory hits excluded)' }),
  }),
  permissions: Type.Object({
    view: Type.Boolean({ description: 'The caller can see the translation' }),
    edit: Type.Boolean({ description: 'The caller can change, run and delete the translation' }),
  }),
  urls: Type.Object({ location: Type.String({ description: 'URL of the translation in the API' }) }),
});
export type TranslationResource = Static<typeof Translation>;

export const ListTranslationsQuery = Type.Object({ ...PageQuery });

export const CreateTranslationBody = Type.Object({
  language: TranslationLanguage,
  source: TranslationSource,
  instructions: Type.Optional(Document),
});
export type CreateTranslationInput = Static<typeof CreateTranslationBody>;

export const UpdateTranslationBody = Type.Object({ instructions: Document });

/** Language code to the term in that language (one line, 1 to 255 characters). */
export const GlossaryTranslations = Type.Record(Type.String({ maxLength: 10 }), Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\n\\r]*$' }), {
  description:
    'Language code to the term in that language. A term given in the source language and the target language is always translated as given; an entry with one language only is a do-not-translate term (kept as written in every language).',
});
export type GlossaryTranslationsInput = Static<typeof GlossaryTranslations>;

export const GlossaryEntry = Type.Object({
  object: Type.Literal('glossary-entry'),
  id: Type.String({ description: 'Unique identifier of the glossary entry' }),
  translations: GlossaryTranslations,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  urls: Type.Object({ location: Type.String({ description: 'URL of the glossary entry in the API' }) }),
});
export type GlossaryEntryResource = Static<typeof GlossaryEntry>;

export const ListGlossaryQuery = Type.Object({
  ...PageQuery,
  orderBy: Type.Optional(TranslationLanguage),
});

export const GlossaryOperation = Type.Union([
  Type.Object({ type: Type.Literal('insert'), translations: GlossaryTranslations }),
  Type.Object({ type: Type.Literal('update'), id: Type.String({ maxLength: 100 }), translations: GlossaryTranslations }),
  Type.Object({ type: Type.Literal('delete'), id: Type.String({ maxLength: 100 }) }),
]);
export type GlossaryOperationInput = Static<typeof GlossaryOperation>;

export const UpdateGlossaryBody = Type.Object({ operations: Type.Array(GlossaryOperation, { maxItems: 1000 }) });
