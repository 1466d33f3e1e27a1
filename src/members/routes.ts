import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { asEnum, OrganizationIdParams, Role, RoleOrGuest } from '../platform/schemas.ts';
import { presentMember } from './presenter.ts';
import { MemberSpace } from '../spaces/schemas.ts';
import { presentSpaces } from '../spaces/service.ts';
import { Member, MemberParams } from './schemas.ts';
import { getMember, listMembers, listMemberSpaces, removeMember, setSsoMember, updateMemberRole } from './service.ts';

const tags = ['organization-members'];
const Order = asEnum(Type.Union([Type.Literal('asc'), Type.Literal('desc')]), { default: 'desc' });

export async function memberRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs/:organizationId/members',
    {
      schema: {
        operationId: 'listMembersInOrganizationById',
        tags,
        params: OrganizationIdParams,
        querystring: Type.Object({
          ...PageQuery,
          order: Type.Optional(Order),
          role: Type.Optional(Type.Union([Role, Type.Literal('guest')], { description: 'A role, or "guest"' })),
          search: Type.Optional(Type.String({ maxLength: 256, description: 'Filters on display name and email' })),
          sort: Type.Optional(
            asEnum(Type.Union([Type.Literal('joinedAt'), Type.Literal('lastSeenAt'), Type.Literal('name')]), {
              default: 'joinedAt',
              description: 'lastSeenAt lists only members who have been seen',
            }),
          ),
        }),
        response: { 200: ListOf(Member), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const page = await listMembers(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map((m) => presentMember(ctx.urls, m)) };
    },
  );

  app.get(
    '/orgs/:organizationId/members/:userId',
    { schema: { operationId: 'getMemberInOrganizationById', tags, params: MemberParams, response: { 200: Member, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return presentMember(ctx.urls, await getMember(ctx, req.params.organizationId, req.params.userId));
    },
  );

  app.patch(
    '/orgs/:organizationId/members/:userId',
    {
      schema: {
        operationId: 'updateMemberInOrganizationById',
        tags,
        params: MemberParams,
        body: Type.Object({ role: Type.Optional(RoleOrGuest) }),
        response: { 200: Member, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return presentMember(ctx.urls, await updateMemberRole(ctx, req.params.organizationId, req.params.userId, req.body.role));
    },
  );

  app.delete(
    '/orgs/:organizationId/members/:userId',
    {
      schema: {
        operationId: 'removeMemberFromOrganizationById',
        tags,
        params: MemberParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await removeMember(req.ctx(), req.params.organizationId, req.params.userId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/orgs/:organizationId/members/:userId/sso',
    {
      schema: {
        operationId: 'setUserAsSSOMemberForOrganization',
        tags,
        params: MemberParams,
        response: { 200: Member, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return presentMember(ctx.urls, await setSsoMember(ctx, req.params.organizationId, req.params.userId));
    },
  );

  app.get(
    '/orgs/:organizationId/members/:userId/spaces',
    {
      schema: {
        operationId: 'listSpacesForOrganizationMember',
        tags,
        params: MemberParams,
        querystring: Type.Object({ ...PageQuery, order: Type.Optional(Order) }),
        response: { 200: ListOf(MemberSpace), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const page = await listMemberSpaces(ctx, req.params.organizationId, req.params.userId, req.query);
      const spaces = await presentSpaces(ctx.db, ctx.urls, page.items);
      return { ...page, items: page.items.map((i, n) => ({ permission: i.permission, space: spaces[n]! })) };
    },
  );
}
