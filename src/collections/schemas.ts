import { Type, type Static } from '@sinclair/typebox';
import { DefaultLevel, MoveBody } from '../spaces/schemas.ts';

export const Collection = Type.Object({
  object: Type.Literal('collection'),
  id: Type.String(),
  title: Type.String(),
  description: Type.Optional(Type.String()),
  organization: Type.String(),
  parent: Type.Optional(Type.String({ description: 'Parent collection id' })),
  defaultLevel: DefaultLevel,
  urls: Type.Object({ location: Type.String(), app: Type.String() }),
  permissions: Type.Object({
    view: Type.Boolean(),
    admin: Type.Boolean(),
    viewInviteLinks: Type.Boolean(),
    create: Type.Boolean(),
  }),
});
export type CollectionResource = Static<typeof Collection>;

export const CollectionTitle = Type.String({ maxLength: 50 });

export const CreateCollectionBody = Type.Object({
  title: Type.Optional(CollectionTitle),
  parent: Type.Optional(Type.String({ maxLength: 100, description: 'Parent collection id' })),
});

export const UpdateCollectionBody = Type.Object({
  title: Type.Optional(CollectionTitle),
  description: Type.Optional(Type.String({ maxLength: 100 })),
  defaultLevel: Type.Optional(DefaultLevel),
});
export type UpdateCollectionInput = Static<typeof UpdateCollectionBody>;

export const MoveCollectionBody = MoveBody;
export const TransferCollectionBody = Type.Object({ organization: Type.String({ maxLength: 100, description: 'Target organization id' }) });
export const CollectionIdParams = Type.Object({ collectionId: Type.String({ maxLength: 100 }) });
