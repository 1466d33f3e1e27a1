import { ApplySpaceTemplate } from '../content/template-schemas.ts';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { asEnum, Timestamp } from '../platform/schemas.ts';
import { DefaultLevel } from '../spaces/schemas.ts';

/** Shapes of sites, their structure and settings (spec document 002 › Sites; official names). */

export const SiteIdParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), siteId: Type.String({ maxLength: 100 }) });
const withId = <K extends string>(key: K) =>
  Type.Object({ organizationId: Type.String({ maxLength: 100 }), siteId: Type.String({ maxLength: 100 }), [key]: Type.String({ maxLength: 100 }) } as Record<'organizationId' | 'siteId' | K, ReturnType<typeof Type.String>>);
export const SiteSpaceIdParams = withId('siteSpaceId');
export const SiteSectionIdParams = withId('siteSectionId');
export const SiteSectionGroupIdParams = withId('siteSectionGroupId');
export const ShareLinkIdParams = withId('shareLinkId');
export const SiteRedirectIdParams = withId('siteRedirectId');
export const GroupSectionParams = Type.Object({
  organizationId: Type.String({ maxLength: 100 }),
  siteId: Type.String({ maxLength: 100 }),
  siteSectionGroupId: Type.String({ maxLength: 100 }),
  siteSectionId: Type.String({ maxLength: 100 }),
});

export const ShareKeyQuery = { shareKey: Type.Optional(Type.String({ maxLength: 200, description: 'Key of a share link of the site' })) };

export const SiteType = asEnum(
  Type.Union([
    Type.Literal('basic'),
    Type.Literal('premium'),
    Type.Literal('ultimate'),
    Type.Literal('sponsored'),
    Type.Literal('legacy-basic'),
    Type.Literal('legacy-premium'),
  ]),
  { description: 'Type of the site (defaults to basic)' },
);
export const SiteVisibility = asEnum(
  Type.Union([Type.Literal('public'), Type.Literal('unlisted'), Type.Literal('share-link'), Type.Literal('visitor-auth')]),
  { description: 'public (indexed), unlisted (not indexed), share-link (secret token in the URL) or visitor-auth (visitor JWT)' },
);
export const SiteTitle = Type.String({ minLength: 2, maxLength: 128, description: 'Title of the site' });
export const BASENAME_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$';
export const SiteBasename = Type.String({ minLength: 1, maxLength: 100, description: 'Basename of the site in its URL: lowercase letters, digits and inner hyphens' });
export const HOSTNAME_PATTERN = '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?[.]){2,}[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$';
export const PROXY_PATTERN = '^([\\w-]+\\.)*[\\w-]+\\.[a-zA-Z]{2,}(\\/[\\w-]+)+$';
export const Icon = Type.String({ maxLength: 50, description: 'Name of an icon (e.g. gear)' });
export const Expression = Type.String({ maxLength: 1024, description: 'Expression deciding whether visitors see the item' });
export const AgentsContext = asEnum(Type.Union([Type.Literal('excluded'), Type.Literal('included')]), { description: 'Whether agents may read the site' });

export const Site = Type.Object({
  object: Type.Literal('site'),
  id: Type.String(),
  type: SiteType,
  appliedType: SiteType,
  title: Type.String(),
  hostname: Type.Optional(Type.String()),
  basename: Type.String(),
  proxy: Type.Optional(Type.Object({ origin: Type.String(), target: Type.String() })),
  visibility: SiteVisibility,
  defaultLevel: DefaultLevel,
  published: Type.Boolean(),
  siteSpaces: Type.Integer({ description: 'Number of site spaces' }),
  createdAt: Timestamp,
  adaptiveContent: Type.Object({ enabled: Type.Boolean() }),
  agentsContext: AgentsContext,
  ads: Type.Object({ status: Type.Literal('pending'), submittable: Type.Boolean() }),
  features: Type.Array(Type.Object({ id: Type.String(), plan: SiteType, frozen: Type.Boolean() })),
  permissions: Type.Object({
    view: Type.Boolean(),
    access: Type.Boolean(),
    edit: Type.Boolean(),
    create: Type.Boolean(),
    admin: Type.Boolean(),
    installIntegration: Type.Boolean(),
    viewAdaptiveSchema: Type.Boolean(),
    editAdaptiveSchema: Type.Boolean(),
  }),
  urls: Type.Object({
    location: Type.String(),
    app: Type.String(),
    preview: Type.String(),
    published: Type.Optional(Type.String({ description: 'Where the site is served; only when published' })),
  }),
});
export type SiteResource = Static<typeof Site>;

export const CreateSiteBody = Type.Object({
  type: Type.Optional(SiteType),
  title: Type.Optional(SiteTitle),
  visibility: Type.Optional(SiteVisibility),
  spaces: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100, description: 'Spaces to add to the site' })),
});
export type CreateSiteInput = Static<typeof CreateSiteBody>;

export const UpdateSiteBody = Type.Object({
  title: Type.Optional(SiteTitle),
  visibility: Type.Optional(SiteVisibility),
  basename: Type.Optional(SiteBasename),
  hostname: Type.Optional(Type.Union([Type.String({ maxLength: 253 }), Type.Null()], { description: 'Custom hostname (unique across the server), or null to remove it' })),
  adaptiveContent: Type.Optional(Type.Object({ enabled: Type.Boolean() })),
  agentsContext: Type.Optional(AgentsContext),
  defaultSiteSpace: Type.Optional(Type.String({ maxLength: 100, description: 'Site space to make the default (within the default section when the site has sections)' })),
  defaultSiteSection: Type.Optional(Type.String({ maxLength: 100, description: 'Section to make the default' })),
  proxy: Type.Optional(Type.Union([Type.String({ maxLength: 512 }), Type.Null()], { description: 'Proxy origin such as company.com/docs, or null to remove it' })),
});
export type UpdateSiteInput = Static<typeof UpdateSiteBody>;

export const ListSitesQuery = Type.Object({
  page: Type.Optional(Type.String({ maxLength: 512 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  space: Type.Optional(Type.String({ maxLength: 100, description: 'Only sites that contain this space' })),
  title: Type.Optional(Type.String({ maxLength: 128, description: 'Only sites whose title contains this text' })),
  published: Type.Optional(Type.Boolean({ description: 'Only published (true) or unpublished (false) sites' })),
  type: Type.Optional(Type.Array(SiteType, { maxItems: 6, description: 'Only sites of these types' })),
});

export const SiteSpace = Type.Object({
  object: Type.Literal('site-space'),
  id: Type.String(),
  path: Type.String(),
  section: Type.Optional(Type.String()),
  // The linked space, as getSpaceById presents it (declared loosely: repeating the whole Space
  // schema in every structure shape made the OpenAPI document megabytes long).
  space: Type.Object({ object: Type.Literal('space'), id: Type.String() }, { additionalProperties: true, description: 'The linked space (the Space resource)' }),
  title: Type.String(),
  default: Type.Boolean(),
  draft: Type.Boolean(),
  condition: Type.Optional(Type.String()),
  hidden: Type.Boolean(),
  hasAdvancedCustomizationFeature: Type.Boolean(),
  urls: Type.Object({ published: Type.Optional(Type.String()) }),
});
export type SiteSpaceResource = Static<typeof SiteSpace>;

export const SiteSection = Type.Object({
  object: Type.Literal('site-section'),
  id: Type.String(),
  title: Type.String(),
  description: Type.Optional(Type.String()),
  default: Type.Boolean(),
  draft: Type.Boolean(),
  path: Type.String(),
  condition: Type.Optional(Type.String()),
  sectionGroup: Type.Optional(Type.String()),
  siteSpaces: Type.Array(SiteSpace),
  urls: Type.Object({ published: Type.Optional(Type.String()) }),
  icon: Type.Optional(Type.String()),
});
export type SiteSectionResource = Static<typeof SiteSection>;

/** Section groups nest at most this deep (a group at the root is at depth 1). */
export const MAX_GROUP_DEPTH = 5;

/** A group's children: sections and groups (nested groups are declared loosely: the schema stays finite). */
export const SiteSectionGroup = Type.Object({
  object: Type.Literal('site-section-group'),
  id: Type.String(),
  title: Type.String(),
  sectionGroup: Type.Optional(Type.String({ description: 'Parent group' })),
  draft: Type.Boolean(),
  sections: Type.Array(Type.Object({ object: Type.Literal('site-section'), id: Type.String() }, { additionalProperties: true }), {
    description: 'Sections directly in the group (deprecated: use children)',
  }),
  children: Type.Array(Type.Object({ object: Type.String(), id: Type.String() }, { additionalProperties: true, description: 'A SiteSection or a SiteSectionGroup' })),
  icon: Type.Optional(Type.String()),
});
export type SiteSectionGroupResource = {
  object: 'site-section-group';
  id: string;
  title: string;
  sectionGroup?: string;
  draft: boolean;
  sections: SiteSectionResource[];
  children: (SiteSectionResource | SiteSectionGroupResource)[];
  icon?: string;
};

export const SiteStructure = Type.Union([
  Type.Object({ type: Type.Literal('sections'), structure: Type.Array(Type.Union([SiteSection, SiteSectionGroup])) }),
  Type.Object({ type: Type.Literal('siteSpaces'), structure: Type.Array(SiteSpace) }),
]);

export const AddSiteSpaceBody = Type.Object({
  spaceId: Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Space to add, or null to create a new space in the organization and add it' }),
  sectionId: Type.Optional(Type.String({ maxLength: 100, description: 'Section to add it to (default: the default section, or the root)' })),
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "With spaceId null: the new space's title (default: the template's title, else \"Untitled\")" })),
  template: Type.Optional(Type.Composite([ApplySpaceTemplate], { description: 'With spaceId null: the template the new space starts from' })),
  draft: Type.Optional(Type.Boolean({ description: 'Draft site spaces are not supported: only false is accepted' })),
  pageId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Custom home pages are not supported: only null is accepted' })),
});
export type AddSiteSpaceInput = Static<typeof AddSiteSpaceBody>;
export const UpdateSiteSpaceBody = Type.Object({
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  condition: Type.Optional(Type.Union([Expression, Type.Null()])),
  spaceId: Type.Optional(Type.String({ maxLength: 100 })),
  hidden: Type.Optional(Type.Boolean()),
});
export type UpdateSiteSpaceInput = Static<typeof UpdateSiteSpaceBody>;

export const ListSiteSpacesQuery = Type.Object({
  ...ShareKeyQuery,
  page: Type.Optional(Type.String({ maxLength: 512 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  default: Type.Optional(Type.Boolean({ description: 'true: only the default site space; false: only the others' })),
});

export const AddSectionBody = Type.Object({
  spaceId: Type.String({ maxLength: 100, description: 'Space added as the first variant of the section' }),
  title: Type.Optional(Type.String({ minLength: 2, maxLength: 128 })),
  icon: Type.Optional(Type.Union([Icon, Type.Null()])),
  description: Type.Optional(Type.String({ maxLength: 256 })),
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  condition: Type.Optional(Expression),
  siteSectionGroupId: Type.Optional(Type.String({ maxLength: 100, description: 'Group to create the section in' })),
});
export type AddSectionInput = Static<typeof AddSectionBody>;
export const UpdateSectionBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 2, maxLength: 128 })),
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  defaultSiteSpace: Type.Optional(Type.String({ maxLength: 100 })),
  condition: Type.Optional(Type.Union([Expression, Type.Null()])),
  icon: Type.Optional(Type.Union([Icon, Type.Null()])),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  siteSectionGroupId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Group to move the section into; null: the site root' })),
});
export type UpdateSectionInput = Static<typeof UpdateSectionBody>;

export const AddGroupBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 100 }),
  icon: Type.Optional(Type.Union([Icon, Type.Null()])),
  sections: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000, description: 'Sections to put in the group' })),
  parent: Type.Optional(Type.String({ maxLength: 100, description: 'Parent group; absent: the site root' })),
});
export type AddGroupInput = Static<typeof AddGroupBody>;
export const UpdateGroupBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  icon: Type.Optional(Type.Union([Icon, Type.Null()])),
  parentSectionGroupId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Group to move into; null: the site root' })),
});
export type UpdateGroupInput = Static<typeof UpdateGroupBody>;
export const GroupAddSectionBody = Type.Object({ sectionId: Type.String({ maxLength: 100 }) });

const PointerType = asEnum(
  Type.Union([Type.Literal('site-space'), Type.Literal('site-section'), Type.Literal('site-section-group'), Type.Literal('site-external-link')]),
);
export const StructurePointer = Type.Object({ type: PointerType, id: Type.String({ maxLength: 100 }) });
export type StructurePointerInput = Static<typeof StructurePointer>;
export const SortStructureBody = Type.Object({
  item: StructurePointer,
  position: Type.Object({ before: Type.Optional(StructurePointer), after: Type.Optional(StructurePointer) }),
});
export type SortStructureInput = Static<typeof SortStructureBody>;

export const MoveSiteSpaceBody = Type.Object({
  position: Type.Optional(
    Type.Object({
      before: Type.Optional(Type.Object({ type: Type.Literal('site-space'), siteSpace: Type.String({ maxLength: 100 }) })),
      after: Type.Optional(Type.Object({ type: Type.Literal('site-space'), siteSpace: Type.String({ maxLength: 100 }) })),
    }),
  ),
});
export const MoveSectionBody = Type.Object({
  position: Type.Optional(
    Type.Object({
      before: Type.Optional(Type.Object({ type: Type.Literal('site-section'), siteSection: Type.String({ maxLength: 100 }) })),
      after: Type.Optional(Type.Object({ type: Type.Literal('site-section'), siteSection: Type.String({ maxLength: 100 }) })),
    }),
  ),
});
const GroupPointer = Type.Object({ type: asEnum(Type.Union([Type.Literal('site-section'), Type.Literal('site-section-group')])), id: Type.String({ maxLength: 100 }) });
export const MoveGroupBody = Type.Object({
  position: Type.Optional(Type.Object({ before: Type.Optional(GroupPointer), after: Type.Optional(GroupPointer) })),
});

export const ShareLink = Type.Object({
  object: Type.Literal('share-link'),
  id: Type.String(),
  createdAt: Timestamp,
  name: Type.String(),
  active: Type.Boolean(),
  urls: Type.Object({ published: Type.Optional(Type.String()) }),
});
export const ShareLinkName = Type.String({ maxLength: 50 });
export const CreateShareLinkBody = Type.Object({ name: ShareLinkName });
export const UpdateShareLinkBody = Type.Object({ active: Type.Optional(Type.Boolean()), name: Type.Optional(ShareLinkName) }, { minProperties: 1 });

// Adaptive content
export const AdaptiveSchema = Type.Object({
  object: Type.Literal('site-adaptive-schema'),
  jsonSchema: Type.Object({}, { additionalProperties: true }),
  updatedAt: Timestamp,
});
export const UpdateAdaptiveSchemaBody = Type.Object({
  jsonSchema: Type.Object({}, { additionalProperties: true, description: 'JSON Schema (draft-07) of the visitor claims' }),
});
export const TemplateConditions = Type.Object({ items: Type.Array(Type.Object({ description: Type.String(), condition: Type.String() })) });

// Publishing auth
export const PublishingAuth = Type.Object({
  object: Type.Literal('publishing-auth'),
  backend: asEnum(Type.Union([Type.Literal('custom'), Type.Literal('integration')])),
  privateKey: Type.String({ description: 'Secret that signs visitor JWTs (HS256)' }),
  fallbackURL: Type.Optional(Type.String()),
  logoutURL: Type.Optional(Type.String()),
});
const Url = Type.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' });
export const UpdatePublishingAuthBody = Type.Object({
  backend: asEnum(Type.Union([Type.Literal('custom'), Type.Literal('integration')])),
  fallbackURL: Type.Optional(Type.Union([Url, Type.Null()])),
  logoutURL: Type.Optional(Type.Union([Url, Type.Null()])),
});
export type UpdatePublishingAuthInput = Static<typeof UpdatePublishingAuthBody>;

// Redirects
export const REDIRECT_SOURCE_PATTERN =
  '^\\/(?!\\*)(?!.*\\*.+)(?:[A-Za-z0-9\\-._~+]|%[0-9A-Fa-f]{2})+(?:\\/(?:[A-Za-z0-9\\-._~+]|%[0-9A-Fa-f]{2})+)*(?:\\/\\*|\\*)?$';
export const RedirectSource = Type.String({
  maxLength: 512,
  pattern: REDIRECT_SOURCE_PATTERN,
  description: 'Path to redirect from, starting with /; may end with * (or /*) to match everything below',
});
export const RedirectDestination = Type.Union([
  Type.Object({ kind: Type.Literal('site-section'), siteSectionId: Type.String({ maxLength: 100 }) }),
  Type.Object({ kind: Type.Literal('site-space'), siteSpaceId: Type.String({ maxLength: 100 }) }),
  Type.Object({ kind: Type.Literal('site-page'), siteSpaceId: Type.String({ maxLength: 100 }), pageId: Type.String({ maxLength: 100 }) }),
  Type.Object({ kind: Type.Literal('external'), url: Url }),
]);
export type RedirectDestinationValue = Static<typeof RedirectDestination>;
export const RedirectInputDestination = Type.Union([
  ...RedirectDestination.anyOf,
  Type.Object({ kind: Type.Literal('path'), spaceId: Type.String({ maxLength: 100 }), path: Type.String({ maxLength: 1000 }) }),
]);
export type RedirectInputDestinationValue = Static<typeof RedirectInputDestination>;
export const SiteRedirect = Type.Object({
  object: Type.Literal('site-redirect'),
  id: Type.String(),
  source: Type.String(),
  draft: Type.Boolean(),
  captureWildcard: Type.Boolean(),
  permanent: Type.Boolean(),
  destination: RedirectDestination,
  createdAt: Timestamp,
  updatedAt: Type.Optional(Timestamp),
});
export const CreateRedirectBody = Type.Object({
  source: RedirectSource,
  captureWildcard: Type.Optional(Type.Boolean()),
  draft: Type.Optional(Type.Boolean()),
  permanent: Type.Optional(Type.Boolean()),
  destination: RedirectInputDestination,
});
export type CreateRedirectInput = Static<typeof CreateRedirectBody>;
export const UpdateRedirectBody = Type.Object({
  source: Type.Optional(RedirectSource),
  captureWildcard: Type.Optional(Type.Boolean()),
  draft: Type.Optional(Type.Boolean()),
  permanent: Type.Optional(Type.Boolean()),
  destination: Type.Optional(RedirectDestination),
});
export type UpdateRedirectInput = Static<typeof UpdateRedirectBody>;
export const BulkRedirectItem = Type.Object({
  source: RedirectSource,
  intent: Type.Optional(asEnum(Type.Union([Type.Literal('live'), Type.Literal('draft'), Type.Literal('publish')]))),
  captureWildcard: Type.Optional(Type.Boolean()),
  permanent: Type.Optional(Type.Boolean()),
  destination: Type.Optional(Type.Union([RedirectInputDestination, Type.Null()], { description: 'null deletes the redirect of that source and intent' })),
});
export type BulkRedirectItemInput = Static<typeof BulkRedirectItem>;
export const BulkRedirectsBody = Type.Object({ redirects: Type.Array(BulkRedirectItem, { minItems: 1, maxItems: 500 }) });
export const BulkRedirectsResult = Type.Object({
  results: Type.Array(
    Type.Object({
      status: asEnum(Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('deleted'), Type.Literal('published')])),
      source: Type.String(),
      draft: Type.Boolean(),
      id: Type.Optional(Type.String()),
    }),
  ),
});
export const ListRedirectsQuery = Type.Object({
  page: Type.Optional(Type.String({ maxLength: 512 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  search: Type.Optional(Type.String({ maxLength: 512, description: 'Only redirects whose source contains this text' })),
  draft: Type.Optional(Type.Boolean({ description: 'Draft redirects (true) or live ones (false, the default)' })),
  orderBy: Type.Optional(asEnum(Type.Union([Type.Literal('createdAt'), Type.Literal('updatedAt'), Type.Literal('source')]))),
});
export const RedirectBySourceQuery = Type.Object({ ...ShareKeyQuery, source: Type.String({ minLength: 1, maxLength: 512, description: 'Path to look up' }) });
export const RedirectLookup = Type.Object({ redirect: SiteRedirect, target: Type.String({ description: 'URL the path redirects to' }) });

/** Object with any properties (passed through as stored). */
export const FreeObject = (description?: string): TSchema => Type.Object({}, { additionalProperties: true, ...(description ? { description } : {}) });

/** A script an installation injects into a site's pages (official `SiteIntegrationScript`). */
export const SiteIntegrationScript = Type.Object({
  script: Type.String({ description: 'Address of the script the pages load' }),
  contentSecurityPolicy: Type.Optional(Type.String({ description: "Sources the script needs, added to the site's Content-Security-Policy" })),
  cookies: Type.Boolean({ description: 'The script may use cookies: pages load it only once the visitor accepts them' }),
});
