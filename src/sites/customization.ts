import { Type, type TSchema } from '@sinclair/typebox';
import { asEnum, Timestamp } from '../platform/schemas.ts';

/**
 * Site customization: what a site owner set is stored as given (a partial object); reads merge it
 * over the defaults below, so every read is complete. A site space may override any key; its read
 * merges the override over the site's settings.
 */

const enumOf = (...values: string[]) => asEnum(Type.Union(values.map((v) => Type.Literal(v)))) as unknown as ReturnType<typeof Type.String>;
const orNull = (schema: TSchema) => Type.Union([schema, Type.Null()]);
const Color = Type.String({ pattern: '^#(?:[0-9a-fA-F]{3}){1,2}$', description: 'Hex color such as #346ddb' });
const ThemedColor = Type.Object({ light: Color, dark: Color });
const ThemedUrl = Type.Object({ light: Type.String({ format: 'uri', maxLength: 2048 }), dark: Type.String({ format: 'uri', maxLength: 2048 }) });
const Free = Type.Object({}, { additionalProperties: true });
const Enabled = Type.Object({ enabled: Type.Boolean() });
const Font = Type.Union([Type.String({ maxLength: 100 }), Free]);

/** The languages a localized text may be given in (the official `TranslationLanguage`). */
const LANGUAGES = ['en', 'fr', 'de', 'es', 'it', 'pt', 'pt-br', 'ru', 'ja', 'zh', 'zh-tw', 'yue', 'ko', 'ar', 'hi', 'nl', 'pl', 'tr', 'sv', 'no', 'da', 'fi', 'el', 'cs', 'hu', 'ro', 'th', 'vi', 'id', 'ms', 'he', 'uk', 'sk', 'bg', 'hr', 'lt', 'lv', 'et', 'sl'];
/** A text per language (overrides of the default language's), at most `max` characters each. */
const Localized = (max: number) => Type.Object({}, { additionalProperties: Type.String({ maxLength: max }), propertyNames: { enum: LANGUAGES } });

const SocialAccount = Type.Object({
  platform: enumOf('twitter', 'instagram', 'facebook', 'linkedin', 'github', 'discord', 'slack', 'youtube', 'tiktok', 'reddit', 'bluesky', 'mastodon', 'threads', 'medium'),
  handle: Type.String({ minLength: 1, maxLength: 128 }),
  display: Type.Object({ footer: Type.Boolean(), header: Type.Boolean() }),
});

/** Customization keys and their values; every key optional (null removes an override). */
function settings(nullable: boolean) {
  const opt = (schema: TSchema) => Type.Optional(nullable ? orNull(schema) : schema);
  return Type.Object({
    title: opt(Type.String({ minLength: 2, maxLength: 128 })),
    localizedTitle: opt(Localized(128)),
    styling: opt(
      Type.Object({
        theme: opt(enumOf('clean', 'muted', 'bold', 'gradient')),
        primaryColor: opt(ThemedColor),
        tint: opt(Type.Object({ color: ThemedColor })),
        infoColor: opt(ThemedColor),
        successColor: opt(ThemedColor),
        warningColor: opt(ThemedColor),
        dangerColor: opt(ThemedColor),
        corners: opt(enumOf('straight', 'rounded', 'circular')),
        depth: opt(enumOf('subtle', 'flat')),
        links: opt(enumOf('default', 'accent')),
        font: opt(Font),
        // null is a value here (headings use the main font), so it is one for a site as well.
        headingFont: Type.Optional(orNull(Font)),
        monospaceFont: opt(Font),
        icons: opt(enumOf('regular', 'solid', 'duotone', 'light', 'thin')),
        sidebar: opt(Type.Object({ background: opt(enumOf('default', 'filled')), list: opt(enumOf('default', 'pill', 'line')) })),
        search: opt(enumOf('prominent', 'subtle')),
        codeTheme: opt(Free),
        background: opt(enumOf('plain', 'match')),
      }),
    ),
    /** Deprecated by GitBook, still part of its settings: kept as given. */
    internationalization: opt(Type.Object({ locale: enumOf('en', 'fr', 'es', 'zh', 'ja', 'de', 'nl', 'no', 'pt-br', 'ru') })),
    favicon: opt(Type.Union([Type.Object({ icon: ThemedUrl }), Type.Object({ emoji: Type.String({ maxLength: 50 }) }), Type.Object({})])),
    header: opt(
      Type.Object({
        preset: opt(enumOf('default', 'bold', 'contrast', 'custom', 'none')),
        logo: opt(ThemedUrl),
        primaryLink: opt(Free),
        backgroundColor: opt(ThemedColor),
        linkColor: opt(ThemedColor),
        links: opt(Type.Array(Free, { maxItems: 50 })),
      }),
    ),
    footer: opt(Type.Object({ logo: opt(ThemedUrl), groups: opt(Type.Array(Free, { maxItems: 50 })), copyright: opt(Type.String({ maxLength: 512 })) })),
    announcement: opt(
      Type.Object({
        enabled: Type.Boolean(),
        message: Type.String({ minLength: 2, maxLength: 128 }),
        localizedMessage: Type.Optional(Localized(128)),
        link: Type.Optional(Free),
        style: enumOf('info', 'warning', 'danger', 'success'),
      }),
    ),
    themes: opt(Type.Object({ default: opt(enumOf('light', 'dark', 'system')), toggeable: opt(Type.Boolean()) })),
    pdf: opt(Enabled),
    feedback: opt(Enabled),
    advancedCustomization: opt(Enabled),
    pagination: opt(Enabled),
    trademark: opt(Enabled),
    ai: opt(
      Type.Object({
        mode: opt(enumOf('none', 'search', 'assistant')),
        greeting: opt(Type.String({ maxLength: 256 })),
        localizedGreeting: opt(Localized(128)),
        suggestions: opt(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10 })),
        /** For the site's assistant only: never shown to visitors (see publishedCustomization). */
        instructions: opt(Type.String({ maxLength: 10_000 })),
      }),
    ),
    git: opt(Type.Object({ showEditLink: Type.Boolean() })),
    pageActions: opt(
      Type.Object({
        items: opt(Type.Array(enumOf('assistant', 'external-ai', 'markdown', 'mcp', 'git', 'pdf'), { maxItems: 6 })),
        externalAI: opt(Type.Boolean()),
        markdown: opt(Type.Boolean()),
        mcp: opt(Type.Boolean()),
      }),
    ),
    externalLinks: opt(Type.Object({ target: enumOf('self', 'blank') })),
    privacyPolicy: opt(Type.Object({ url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048 })) })),
    socialPreview: opt(Type.Object({ url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048 })) })),
    socialAccounts: opt(Type.Array(SocialAccount, { maxItems: 10 })),
    insights: opt(Type.Object({ trackingCookie: Type.Boolean() })),
  });
}

/**
 * What `updateSiteCustomizationById` accepts: the settings, and the `updatedAt` a read returns
 * (ignored), so that what a read returns can be sent back unchanged.
 */
export const CustomizationInput = Type.Composite([
  settings(false),
  Type.Object({ updatedAt: Type.Optional(Type.String({ description: 'Ignored: set by the server when the settings change', maxLength: 64 })) }),
]);
export const CustomizationOverride = settings(true);
/** What reads return: the complete settings (any key the defaults or an owner set). */
export const Customization = Type.Object({ updatedAt: Type.Optional(Timestamp) }, { additionalProperties: true });

const gray = { light: '#346DDB', dark: '#346DDB' };
export const DEFAULT_CUSTOMIZATION = {
  styling: {
    theme: 'clean',
    primaryColor: gray,
    infoColor: { light: '#787878', dark: '#787878' },
    successColor: { light: '#00C950', dark: '#00C950' },
    warningColor: { light: '#FE9A00', dark: '#FE9A00' },
    dangerColor: { light: '#FB2C36', dark: '#FB2C36' },
    corners: 'rounded',
    depth: 'subtle',
    links: 'default',
    font: 'Inter',
    monospaceFont: 'IBMPlexMono',
    codeTheme: { default: { light: 'default-light', dark: 'default-dark' }, openapi: { light: 'default-light', dark: 'default-dark' } },
    background: 'plain',
    icons: 'regular',
    sidebar: { background: 'default', list: 'default' },
    search: 'prominent',
  },
  internationalization: { locale: 'en' },
  favicon: {},
  header: { preset: 'default', links: [] },
  footer: { groups: [] },
  themes: { default: 'light', toggeable: true },
  pdf: { enabled: true },
  feedback: { enabled: false },
  ai: { mode: 'search' },
  git: { showEditLink: false },
  advancedCustomization: { enabled: true },
  trademark: { enabled: true },
  externalLinks: { target: 'self' },
  pagination: { enabled: true },
  pageActions: { items: ['markdown', 'external-ai'], externalAI: true, markdown: true, mcp: false },
  privacyPolicy: {},
  socialPreview: {},
  socialAccounts: [],
  insights: { trackingCookie: true },
};

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `over` merged into `base` key by key (objects recursively; arrays and scalars replace). In an
 * override null removes the key; in a site's own settings null is a value (`headingFont: null`:
 * headings in the main font), kept so that what was set reads back as it was set.
 */
export function deepMerge(base: unknown, over: unknown, nullRemoves = true): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Obj = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === null && nullRemoves) delete out[key];
    else if (value !== undefined) out[key] = deepMerge(base[key], value, nullRemoves);
  }
  return out;
}

/** An override patch applied to a stored override: null clears a key, so the site's value shows again. */
export function applyOverride(current: unknown, patch: Obj): Obj {
  const out: Obj = isObject(current) ? { ...current } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isObject(value) && isObject(out[key])) out[key] = applyOverride(out[key], value);
    else if (isObject(value)) out[key] = applyOverride({}, value);
    else if (value !== undefined) out[key] = value;
  }
  return out;
}

/** A complete reading of the settings: defaults, then the site's own, then a site space's override. */
export function effectiveCustomization(site: unknown, override?: unknown): Obj {
  let merged = deepMerge(DEFAULT_CUSTOMIZATION, site, false) as Obj;
  if (override) merged = deepMerge(merged, override) as Obj;
  return merged;
}

/**
 * The settings as those who cannot change them read them: without the assistant's `instructions`,
 * which GitBook keeps for the site's managers and never shows on the published site.
 */
export function withoutPrivateSettings<T extends Obj>(settings: T): T {
  const ai = settings.ai;
  if (!isObject(ai) || !('instructions' in ai)) return settings;
  const { instructions: _hidden, ...rest } = ai;
  return { ...settings, ai: rest };
}
