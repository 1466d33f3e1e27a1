import { Type } from '@sinclair/typebox';
import { Organization } from '../orgs/schemas.ts';
import { asEnum, Timestamp } from '../platform/schemas.ts';
import { Space } from '../spaces/schemas.ts';
import { Site } from '../sites/schemas.ts';


export const SCOPES = [
  'space:content:read', 'space:content:write', 'space:metadata:read', 'space:metadata:write', 'space:git:sync', 'page:feedback:read',
  'site:metadata:read', 'site:views:read', 'site:script:inject', 'site:script:cookies', 'site:visitor:auth', 'site:visitor:claims',
  'site:adaptive:read', 'site:adaptive:write', 'conversations:ingest', 'openapi:read', 'openapi:write',
] as const;
export const CATEGORIES = ['analytics', 'collaboration', 'content', 'marketing', 'visitor-auth', 'other'] as const;
export const TARGETS = ['all', 'site', 'space', 'organization'] as const;
export const VISIBILITIES = ['public', 'private', 'unlisted'] as const;

export const Scope = asEnum(Type.Union([Type.Literal('space:content:read'), Type.Literal('space:content:write'), Type.Literal('space:metadata:read'), Type.Literal('space:metadata:write'), Type.Literal('space:git:sync'), Type.Literal('page:feedback:read'), Type.Literal('site:metadata:read'), Type.Literal('site:views:read'), Type.Literal('site:script:inject'), Type.Literal('site:script:cookies'), Type.Literal('site:visitor:auth'), Type.Literal('site:visitor:claims'), Type.Literal('site:adaptive:read'), Type.Literal('site:adaptive:write'), Type.Literal('conversations:ingest'), Type.Literal('openapi:read'), Type.Literal('openapi:write')]), { description: 'What an installation of the integration may do' });
export const Category = asEnum(Type.Union([Type.Literal('analytics'), Type.Literal('collaboration'), Type.Literal('content'), Type.Literal('marketing'), Type.Literal('visitor-auth'), Type.Literal('other')]), { description: 'Category of the integration' });
export const Target = asEnum(Type.Union([Type.Literal('all'), Type.Literal('site'), Type.Literal('space'), Type.Literal('organization')]), { description: 'Where the integration is installed and configured' });
export const IntegrationVisibility = asEnum(Type.Union([Type.Literal('public'), Type.Literal('private'), Type.Literal('unlisted')]), { description: 'public: listed for everyone; unlisted: installable by name; private: only its organization' });
export const InstallationStatus = asEnum(Type.Union([Type.Literal('active'), Type.Literal('pending'), Type.Literal('paused')]), { description: 'pending until the required configuration is set' });
export const Selection = asEnum(Type.Union([Type.Literal('all'), Type.Literal('selected')]), { description: 'all: every space (or site) of the organization; selected: the chosen ones' });

export const NAME_PATTERN = '^[a-zA-Z0-9-_.]+$';
export const IntegrationNameParams = Type.Object({ integrationName: Type.String({ pattern: NAME_PATTERN, maxLength: 100 }) });
export const InstallationParams = Type.Object({ integrationName: Type.String({ pattern: NAME_PATTERN, maxLength: 100 }), installationId: Type.String({ maxLength: 100 }) });
export const SpaceInstallationParams = Type.Object({
  integrationName: Type.String({ pattern: NAME_PATTERN, maxLength: 100 }),
  installationId: Type.String({ maxLength: 100 }),
  spaceId: Type.String({ maxLength: 100 }),
});
export const EventParams = Type.Object({ integrationName: Type.String({ pattern: NAME_PATTERN, maxLength: 100 }), eventId: Type.String({ maxLength: 100 }) });

const PropertySchema = Type.Object(
  {
    type: asEnum(Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean'), Type.Literal('button')]), { description: 'Type of the value' }),
    title: Type.Optional(Type.String({ maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 100 })),
    default: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
    completion_url: Type.Optional(Type.String({ maxLength: 2048 })),
    enum: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 })),
    callback_url: Type.Optional(Type.String({ maxLength: 2048 })),
    button_text: Type.Optional(Type.String({ maxLength: 100 })),
  },
);
const ConfigurationSchema = Type.Union([
  Type.Object({
    properties: Type.Record(Type.String(), PropertySchema, { maxProperties: 100 }),
    required: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, uniqueItems: true })),
  }),
  Type.Object({ componentId: Type.String({ maxLength: 100 }) }),
]);
const Configurations = Type.Object({
  account: Type.Optional(ConfigurationSchema),
  space: Type.Optional(ConfigurationSchema),
  site: Type.Optional(ConfigurationSchema),
});
const Block = Type.Object({
  id: Type.String({ pattern: NAME_PATTERN, maxLength: 100 }),
  title: Type.String({ minLength: 2, maxLength: 40 }),
  description: Type.Optional(Type.String({ maxLength: 150 })),
  icon: Type.Optional(Type.String({ maxLength: 2048 })),
  urlUnfurl: Type.Optional(Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 50 })),
  markdown: Type.Optional(Type.Object({ codeblock: Type.String({ maxLength: 100 }), body: Type.String({ maxLength: 2048 }) })),
});
const ContentSource = Type.Object({
  id: Type.String({ pattern: NAME_PATTERN, maxLength: 100 }),
  title: Type.String({ minLength: 2, maxLength: 40 }),
  description: Type.Optional(Type.String({ maxLength: 150 })),
  icon: Type.Optional(Type.String({ maxLength: 2048 })),
  configuration: Type.Object({ componentId: Type.String({ maxLength: 100 }) }),
});
const ExternalLink = Type.Object({ url: Type.String({ format: 'uri', maxLength: 2048 }), label: Type.String({ maxLength: 100 }) });
const Csp = Type.Union([Type.String({ maxLength: 10_000 }), Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 2000 }), { maxProperties: 40 })]);

export const PublishBody = Type.Object({
  runtime: Type.Optional(asEnum(Type.Union([Type.Literal('v1'), Type.Literal('v2')]), { description: 'Runtime of the script' })),
  icon: Type.Optional(Type.String({ description: 'PNG, JPEG or GIF image, base64' })),
  title: Type.Optional(Type.String({ minLength: 2, maxLength: 30 })),
  description: Type.Optional(Type.String({ maxLength: 150 })),
  summary: Type.Optional(Type.String({ maxLength: 2048 })),
  previewImages: Type.Optional(Type.Array(Type.String(), { maxItems: 3 })),
  visibility: Type.Optional(IntegrationVisibility),
  target: Type.Optional(Target),
  scopes: Type.Optional(Type.Array(Scope, { maxItems: SCOPES.length, uniqueItems: true })),
  categories: Type.Optional(Type.Array(Category, { maxItems: CATEGORIES.length, uniqueItems: true })),
  blocks: Type.Optional(Type.Array(Block, { maxItems: 50 })),
  contentSources: Type.Optional(Type.Array(ContentSource, { maxItems: 50 })),
  externalLinks: Type.Optional(Type.Array(ExternalLink, { maxItems: 5 })),
  configurations: Type.Optional(Configurations),
  script: Type.Optional(Type.String({ description: 'The bundled ES module of the integration' })),
  organization: Type.Optional(Type.String({ maxLength: 100, description: 'Id or subdomain (hostname) of the publishing organization' })),
  secrets: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 10_000 }), { maxProperties: 20 })),
  contentSecurityPolicy: Type.Optional(Csp),
});

export const Integration = Type.Object({
  object: Type.Literal('integration'),
  name: Type.String(),
  version: Type.Number(),
  title: Type.String(),
  description: Type.Optional(Type.String()),
  summary: Type.Optional(Type.String()),
  previewImages: Type.Array(Type.String()),
  target: Target,
  verified: Type.Boolean(),
  visibility: IntegrationVisibility,
  scopes: Type.Array(Scope),
  categories: Type.Array(Category),
  blocks: Type.Array(Block),
  contentSources: Type.Array(ContentSource),
  configurations: Configurations,
  externalLinks: Type.Array(ExternalLink),
  owner: Organization,
  urls: Type.Object({
    location: Type.String(),
    icon: Type.Optional(Type.String()),
    app: Type.String(),
    assets: Type.String(),
    publicEndpoint: Type.String(),
    publicContentEndpoint: Type.String(),
  }),
  permissions: Type.Object({ admin: Type.Boolean() }),
  contentSecurityPolicy: Type.Optional(Csp),
});

const InstallationUrls = Type.Object({ location: Type.String(), app: Type.String(), publicEndpoint: Type.String(), publicContentEndpoint: Type.String() });
export const Installation = Type.Object({
  id: Type.String(),
  status: InstallationStatus,
  space_selection: Selection,
  site_selection: Selection,
  spaces: Type.Number(),
  configuration: Type.Object({}, { additionalProperties: true }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  urls: InstallationUrls,
  externalIds: Type.Array(Type.String()),
  target: Type.Object({ organization: Type.String() }),
});

/** What a space installation and a site installation share; each adds its target. */
const targetInstallationFields = {
  integration: Type.String(),
  installation: Type.String(),
  status: InstallationStatus,
  configuration: Type.Object({}, { additionalProperties: true }),
  externalIds: Type.Array(Type.String()),
  urls: Type.Object({ location: Type.String(), publicEndpoint: Type.String(), publicContentEndpoint: Type.String() }),
};

export const SpaceInstallation = Type.Object({ ...targetInstallationFields, space: Type.Union([Type.String(), Space]) });

export const SiteInstallation = Type.Object({ ...targetInstallationFields, site: Type.Union([Type.String(), Site]) });
export const SiteInstallationParams = Type.Object({
  integrationName: Type.String({ pattern: NAME_PATTERN, maxLength: 100 }),
  installationId: Type.String({ maxLength: 100 }),
  siteId: Type.String({ maxLength: 100 }),
});
export const InstallOnSiteBody = Type.Object({ siteId: Type.String({ maxLength: 100 }) });

export const ExternalIds = Type.Array(Type.String({ maxLength: 200 }), { maxItems: 5 });
export const InstallBody = Type.Object({ organization: Type.String({ maxLength: 100 }) });
export const UpdateInstallationBody = Type.Object({
  externalIds: Type.Optional(ExternalIds),
  configuration: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 100 })),
  space_selection: Type.Optional(Selection),
  site_selection: Type.Optional(Selection),
});
export const InstallOnSpaceBody = Type.Object({ space: Type.String({ maxLength: 100 }) });
export const UpdateSpaceInstallationBody = Type.Object({
  externalIds: Type.Optional(ExternalIds),
  configuration: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 100 })),
});
export const DevBody = Type.Object({ tunnelUrl: Type.String({ minLength: 1, maxLength: 256 }), all: Type.Optional(Type.Boolean({ default: false })) });

export const IntegrationEvent = Type.Object({
  id: Type.String(),
  integrationId: Type.String(),
  installationId: Type.Optional(Type.String()),
  createdAt: Timestamp,
  payload: Type.Object({ eventId: Type.String(), type: Type.String() }, { additionalProperties: true }),
  status: asEnum(Type.Union([Type.Literal('success'), Type.Literal('failed')]), { description: 'How delivering the event ended' }),
});
export const EventLog = Type.Object({ message: Type.String(), timestamp: Timestamp, level: asEnum(Type.Union([Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')]), { description: 'Level of the line' }) });
export const EventWithTrace = Type.Object({ event: IntegrationEvent, trace: Type.Object({ logs: Type.Array(EventLog) }) });

export const IntegrationListQuery = {
  search: Type.Optional(Type.String({ maxLength: 200 })),
  category: Type.Optional(Category),
  blockDomain: Type.Optional(Type.String({ pattern: NAME_PATTERN, maxLength: 100 })),
  blocks: Type.Optional(Type.Boolean()),
  contentSources: Type.Optional(Type.Boolean()),
  owner: Type.Optional(Type.String({ maxLength: 100 })),
  scope: Type.Optional(Scope),
  target: Type.Optional(Target),
};

