import { Type, type Static } from '@sinclair/typebox';
import { asEnum, MergeRulesRules, Role, RoleOrGuest, Timestamp } from '../platform/schemas.ts';

/** The state of a space's git synchronisation (set up and run by src/git/). */
export const GitSyncState = Type.Object({
  installationId: Type.String(),
  installationProvider: Type.Union([Type.Literal('github'), Type.Literal('gitlab'), Type.Literal('github-legacy')]),
  installationStatus: Type.Union([Type.Literal('unauthenticated'), Type.Literal('active'), Type.Literal('pending')]),
  repoName: Type.Optional(Type.String()),
  integration: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  updatedAt: Type.Optional(Timestamp),
  operation: Type.Optional(
    Type.Object({
      state: Type.Union([Type.Literal('running'), Type.Literal('success'), Type.Literal('failure'), Type.Literal('timeout')]),
      direction: Type.Union([Type.Literal('import'), Type.Literal('export')]),
      startedAt: Timestamp,
      endedAt: Type.Optional(Timestamp),
      error: Type.Optional(Type.String({ description: 'Why the operation failed, in words a user can act on' })),
    }),
  ),
});
export type GitSyncStateResource = Static<typeof GitSyncState>;

export const Visibility = asEnum(
  Type.Union([
    Type.Literal('public'),
    Type.Literal('unlisted'),
    Type.Literal('share-link'),
    Type.Literal('visitor-auth'),
    Type.Literal('in-collection'),
    Type.Literal('private'),
  ]),
  { description: 'Who can read the space without being granted access' },
);

export const EditMode = asEnum(Type.Union([Type.Literal('live'), Type.Literal('locked')]), {
  description: 'live: users edit directly; locked: every edit is refused',
});

export const LANGUAGES = [
  'en', 'fr', 'de', 'es', 'it', 'pt', 'pt-br', 'ru', 'ja', 'zh', 'zh-tw', 'yue', 'ko', 'ar', 'hi', 'nl', 'pl', 'tr', 'sv',
  'no', 'da', 'fi', 'el', 'cs', 'hu', 'ro', 'th', 'vi', 'id', 'ms', 'he', 'uk', 'sk', 'bg', 'hr', 'lt', 'lv', 'et', 'sl',
] as const;
export const Language = asEnum(Type.Union(LANGUAGES.map((l) => Type.Literal(l))), { description: 'Content language' });

/** A role, null (no default access) or "inherit" (from the parent collection or organization). */
export const DefaultLevel = Type.Union([Role, Type.Null(), Type.Literal('inherit')]);

export const SpaceMergeRules = Type.Union([
  Type.Object({ type: Type.Literal('inherit') }),
  Type.Object({ type: Type.Literal('none') }),
  MergeRulesRules,
]);

export const Emoji = Type.String({ minLength: 1, maxLength: 50, description: 'An emoji' });
export const SpaceTitle = Type.String({ maxLength: 50 });

export const Pointer = Type.Union([
  Type.Object({ type: Type.Literal('space'), space: Type.String({ maxLength: 100 }) }),
  Type.Object({ type: Type.Literal('collection'), collection: Type.String({ maxLength: 100 }) }),
]);
export const Position = Type.Object({ before: Type.Optional(Pointer), after: Type.Optional(Pointer) });

export const SpacePermissions = Type.Object({
  view: Type.Boolean(),
  access: Type.Boolean(),
  admin: Type.Boolean(),
  viewInviteLinks: Type.Boolean(),
  edit: Type.Boolean(),
  triggerGitSync: Type.Boolean(),
  comment: Type.Boolean(),
  merge: Type.Boolean(),
  review: Type.Boolean(),
  installIntegration: Type.Boolean(),
});

export const Space = Type.Object({
  object: Type.Literal('space'),
  id: Type.String(),
  title: Type.String(),
  emoji: Type.String(),
  visibility: Visibility,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Type.Optional(Timestamp),
  editMode: EditMode,
  mergeRules: SpaceMergeRules,
  organization: Type.String(),
  parent: Type.Optional(Type.String({ description: 'Parent collection id' })),
  language: Type.Optional(Type.String()),
  revision: Type.String({ description: 'Id of the active revision' }),
  defaultLevel: DefaultLevel,
  comments: Type.Integer({ description: 'Open comments' }),
  changeRequests: Type.Integer(),
  changeRequestsOpen: Type.Integer(),
  changeRequestsDraft: Type.Integer(),
  urls: Type.Object({
    location: Type.String(),
    app: Type.String(),
    published: Type.Optional(Type.String()),
    public: Type.Optional(Type.String()),
    icon: Type.Optional(Type.String()),
  }),
  permissions: SpacePermissions,
  gitSync: Type.Optional(GitSyncState),
});
export type SpaceResource = Static<typeof Space>;

export const CreateSpaceBody = Type.Object({
  title: Type.Optional(SpaceTitle),
  emoji: Type.Optional(Emoji),
  parent: Type.Optional(Type.String({ maxLength: 100, description: 'Parent collection id' })),
  language: Type.Optional(Language),
  editMode: Type.Optional(EditMode),
  visibility: Type.Optional(Visibility),
});
export type CreateSpaceInput = Static<typeof CreateSpaceBody>;

export const UpdateSpaceBody = Type.Object({
  title: Type.Optional(SpaceTitle),
  emoji: Type.Optional(Type.Union([Emoji, Type.Null()])),
  icon: Type.Optional(Type.Union([Type.String({ format: 'uri', maxLength: 2048 }), Type.Null()])),
  editMode: Type.Optional(EditMode),
  defaultLevel: Type.Optional(DefaultLevel),
  language: Type.Optional(Language),
  mergeRules: Type.Optional(SpaceMergeRules),
  visibility: Type.Optional(Visibility),
});
export type UpdateSpaceInput = Static<typeof UpdateSpaceBody>;

export const MoveBody = Type.Object({
  parent: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Parent collection id, or null for the top level' })),
  position: Type.Optional(Position),
});
export type MoveInput = Static<typeof MoveBody>;

export const TransferSpaceBody = Type.Object({
  organization: Type.String({ maxLength: 100, description: 'Target organization id' }),
  collection: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Target collection in that organization' })),
});

export const SpaceIdParams = Type.Object({ spaceId: Type.String({ maxLength: 100 }) });

export const MemberSpace = Type.Object({ permission: Role, space: Space });
export { RoleOrGuest };
