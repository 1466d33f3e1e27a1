import { Type } from '@sinclair/typebox';
import { presentMember } from '../members/presenter.ts';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { Role, RoleOrGuest, User } from '../platform/schemas.ts';
import { presentTeam } from '../teams/presenter.ts';
import { Team } from '../teams/schemas.ts';
import { grant, listEffective, listTeamGrants, listUserGrants, removeGrant, setGrant, type TargetType } from './service.ts';

const Ids = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 });
const InviteBody = Type.Object({
  role: RoleOrGuest,
  users: Type.Optional(Ids),
  teams: Type.Optional(Ids),
});
const RoleBody = Type.Object({ role: RoleOrGuest });
const UserPermission = Type.Object({ permission: Role, user: User });
const TeamPermission = Type.Object({ permission: Role, team: Team });

/**
 * The same eight operations on spaces and on collections: invite users and teams, list direct
 * user and team grants, change or remove one, and list everyone's effective access.
 */
function contentPermissionRoutes(app: FolioApp, type: TargetType) {
  const Name = type === 'space' ? 'Space' : 'Collection';
  const param = type === 'space' ? 'spaceId' : 'collectionId';
  const prefix = `/${type === 'space' ? 'spaces' : 'collections'}/:${param}/permissions`;
  const Params = Type.Object({ [param]: Type.String({ maxLength: 100 }) });
  const UserParams = Type.Object({ [param]: Type.String({ maxLength: 100 }), userId: Type.String({ maxLength: 100 }) });
  const TeamParams = Type.Object({ [param]: Type.String({ maxLength: 100 }), teamId: Type.String({ maxLength: 100 }) });
  const tags = [`${type}-permissions`];
  const idOf = (params: unknown) => (params as Record<string, string>)[param]!;

  app.post(
    prefix,
    { schema: { operationId: `inviteTo${Name}`, tags, params: Params, body: InviteBody, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await grant(req.ctx(), type, idOf(req.params), req.body);
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${prefix}/users`,
    {
      schema: {
        operationId: `listUserPermissionsIn${Name}`,
        tags,
        params: Params,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(UserPermission), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const page = await listUserGrants(ctx, type, idOf(req.params), req.query);
      return { ...page, items: page.items.map((m) => ({ permission: m.permission, user: presentMember(ctx.urls, m).user })) };
    },
  );

  app.get(
    `${prefix}/teams`,
    {
      schema: {
        operationId: `listTeamPermissionsIn${Name}`,
        tags,
        params: Params,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(TeamPermission), ...errorResponses },
      },
    },
    async (req) => {
      const { membership, ...page } = await listTeamGrants(req.ctx(), type, idOf(req.params), req.query);
      return { ...page, items: page.items.map((t) => ({ permission: t.permission, team: presentTeam(t, membership) })) };
    },
  );

  app.get(
    `${prefix}/aggregate`,
    {
      schema: {
        operationId: `listPermissionsAggregateIn${Name}`,
        tags,
        params: Params,
        querystring: Type.Object({ ...PageQuery, role: Type.Optional(Role) }),
        response: { 200: ListOf(UserPermission), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const page = await listEffective(ctx, type, idOf(req.params), req.query);
      return { ...page, items: page.items.map((i) => ({ permission: i.permission, user: presentMember(ctx.urls, i.member).user })) };
    },
  );

  for (const principal of ['user', 'team'] as const) {
    const Principal = principal === 'user' ? 'User' : 'Team';
    const path = `${prefix}/${principal}s/:${principal}Id`;
    const params = principal === 'user' ? UserParams : TeamParams;
    const principalId = (p: unknown) => (p as Record<string, string>)[`${principal}Id`]!;
    app.patch(
      path,
      {
        schema: {
          operationId: `update${Principal}PermissionIn${Name}`,
          tags,
          params,
          body: RoleBody,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        await setGrant(req.ctx(), type, idOf(req.params), { type: principal, id: principalId(req.params) }, req.body.role);
        return reply.status(204).send(null);
      },
    );
    app.delete(
      path,
      {
        schema: {
          operationId: `remove${Principal}From${Name}`,
          tags,
          params,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (req, reply) => {
        await removeGrant(req.ctx(), type, idOf(req.params), { type: principal, id: principalId(req.params) });
        return reply.status(204).send(null);
      },
    );
  }
}

export async function permissionRoutes(app: FolioApp): Promise<void> {
  contentPermissionRoutes(app, 'space');
  contentPermissionRoutes(app, 'collection');
}
