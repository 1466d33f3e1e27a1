import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { OrganizationIdParams } from '../platform/schemas.ts';
import { presentInviteLink } from './presenter.ts';
import {
  CreateInviteBody,
  InviteLink,
  InviteParams,
  InviteUsersBody,
  InviteUsersResponse,
  JoinResponse,
  UpdateInviteBody,
} from './schemas.ts';
import {
  assertOrganizationInviteBody,
  createInviteLink,
  deleteInviteLink,
  getInviteLink,
  inviteUsers,
  joinWithInvite,
  listInviteLinks,
  updateInviteLink,
} from './service.ts';

const tags = ['organization-invites'];

export async function inviteRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs/:organizationId/link-invites',
    {
      schema: {
        operationId: 'listOrganizationInviteLinks',
        tags,
        params: OrganizationIdParams,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(InviteLink), ...errorResponses },
      },
    },
    async (req) => {
      const page = await listInviteLinks(req.ctx(), req.params.organizationId, req.query);
      return { ...page, items: page.items.map(presentInviteLink) };
    },
  );

  app.post(
    '/orgs/:organizationId/link-invites',
    {
      schema: {
        operationId: 'createOrganizationInvite',
        tags,
        params: OrganizationIdParams,
        body: CreateInviteBody,
        response: { 201: InviteLink, ...errorResponses },
      },
      // Content invites would otherwise fail as "missing role"; say what is actually unsupported.
      preValidation: async (req) => assertOrganizationInviteBody(req.body),
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { organizationId } = req.params;
      const view = await createInviteLink(ctx, organizationId, req.body.role);
      reply
        .status(201)
        .header('location', ctx.urls.api(`/orgs/${encodeURIComponent(organizationId)}/link-invites/${encodeURIComponent(view.invite.id)}`));
      return presentInviteLink(view);
    },
  );

  app.get(
    '/orgs/:organizationId/link-invites/:inviteId',
    {
      schema: {
        operationId: 'getOrganizationInviteLink',
        tags,
        params: InviteParams,
        response: { 200: InviteLink, ...errorResponses },
      },
    },
    async (req) => presentInviteLink(await getInviteLink(req.ctx(), req.params.organizationId, req.params.inviteId)),
  );

  app.patch(
    '/orgs/:organizationId/link-invites/:inviteId',
    {
      schema: {
        operationId: 'updateOrganizationInviteById',
        tags,
        params: InviteParams,
        body: UpdateInviteBody,
        response: { 200: InviteLink, ...errorResponses },
      },
    },
    async (req) =>
      presentInviteLink(await updateInviteLink(req.ctx(), req.params.organizationId, req.params.inviteId, req.body)),
  );

  app.delete(
    '/orgs/:organizationId/link-invites/:inviteId',
    {
      schema: {
        operationId: 'deleteOrganizationInviteById',
        tags,
        params: InviteParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await deleteInviteLink(req.ctx(), req.params.organizationId, req.params.inviteId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/orgs/:organizationId/invites/:inviteId',
    {
      schema: {
        operationId: 'joinOrganizationWithInvite',
        tags,
        params: InviteParams,
        response: { 200: JoinResponse, ...errorResponses },
      },
    },
    async (req) => {
      await joinWithInvite(req.ctx(), req.params.organizationId, req.params.inviteId);
      return {};
    },
  );

  app.post(
    '/orgs/:organizationId/invites',
    {
      schema: {
        operationId: 'inviteUsersToOrganization',
        tags,
        params: OrganizationIdParams,
        body: InviteUsersBody,
        response: { 200: InviteUsersResponse, ...errorResponses },
      },
    },
    async (req) => inviteUsers(req.ctx(), req.params.organizationId, req.body),
  );
}
