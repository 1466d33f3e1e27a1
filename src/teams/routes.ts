import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { presentMemberTeam, presentTeam, presentTeamMember } from './presenter.ts';
import {
  AddTeamMemberBody,
  CreateTeamBody,
  ListMemberTeamsQuery,
  ListTeamsQuery,
  MemberParams,
  MemberTeam,
  OrgParams,
  OrganizationTeamMember,
  Team,
  TeamMemberParams,
  TeamParams,
  UpdateTeamBody,
  UpdateTeamMembersBody,
} from './schemas.ts';
import {
  addTeamMember,
  createTeam,
  deleteTeam,
  getTeam,
  listMemberTeams,
  listTeamMembers,
  listTeams,
  removeTeamMember,
  renameTeam,
  updateTeamMembers,
} from './service.ts';

const tags = ['teams'];
const memberTags = ['team-members'];

export async function teamRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs/:organizationId/teams',
    {
      schema: {
        operationId: 'listTeamsInOrganizationById',
        tags,
        params: OrgParams,
        querystring: ListTeamsQuery,
        response: { 200: ListOf(Team), ...errorResponses },
      },
    },
    async (req) => {
      const { membership, page } = await listTeams(req.ctx(), req.params.organizationId, req.query);
      return { ...page, items: page.items.map((t) => presentTeam(t, membership)) };
    },
  );

  app.put(
    '/orgs/:organizationId/teams',
    {
      schema: {
        operationId: 'createOrganizationTeam',
        tags,
        params: OrgParams,
        body: CreateTeamBody,
        response: { 201: Team, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { team, membership } = await createTeam(ctx, req.params.organizationId, req.body);
      reply.status(201).header('location', ctx.urls.api(`/orgs/${encodeURIComponent(team.organization_id)}/teams/${team.id}`));
      return presentTeam(team, membership);
    },
  );

  app.get(
    '/orgs/:organizationId/teams/:teamId',
    {
      schema: {
        operationId: 'getTeamInOrganizationById',
        tags,
        params: TeamParams,
        response: { 200: Team, ...errorResponses },
      },
    },
    async (req) => {
      const { team, membership } = await getTeam(req.ctx(), req.params.organizationId, req.params.teamId);
      return presentTeam(team, membership);
    },
  );

  app.patch(
    '/orgs/:organizationId/teams/:teamId',
    {
      schema: {
        operationId: 'updateTeamInOrganizationById',
        tags,
        params: TeamParams,
        body: UpdateTeamBody,
        response: { 200: Team, ...errorResponses },
      },
    },
    async (req) => {
      const { team, membership } = await renameTeam(req.ctx(), req.params.organizationId, req.params.teamId, req.body.title);
      return presentTeam(team, membership);
    },
  );

  app.delete(
    '/orgs/:organizationId/teams/:teamId',
    {
      schema: {
        operationId: 'removeTeamFromOrganizationById',
        tags,
        params: TeamParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await deleteTeam(req.ctx(), req.params.organizationId, req.params.teamId);
      return reply.status(204).send(null);
    },
  );

  app.put(
    '/orgs/:organizationId/teams/:teamId/members',
    {
      schema: {
        operationId: 'updateMembersInOrganizationTeam',
        tags: memberTags,
        params: TeamParams,
        body: UpdateTeamMembersBody,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await updateTeamMembers(req.ctx(), req.params.organizationId, req.params.teamId, req.body);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/orgs/:organizationId/teams/:teamId/members',
    {
      schema: {
        operationId: 'listTeamMembersInOrganizationById',
        tags: memberTags,
        params: TeamParams,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(OrganizationTeamMember), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { membership, page } = await listTeamMembers(ctx, req.params.organizationId, req.params.teamId, req.query);
      return { ...page, items: page.items.map((m) => presentTeamMember(ctx.urls, m, membership)) };
    },
  );

  app.put(
    '/orgs/:organizationId/teams/:teamId/members/:userId',
    {
      schema: {
        operationId: 'addMemberToOrganizationTeamById',
        tags: memberTags,
        params: TeamMemberParams,
        body: AddTeamMemberBody,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      const { organizationId, teamId, userId } = req.params;
      await addTeamMember(req.ctx(), organizationId, teamId, userId, req.body?.role);
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/orgs/:organizationId/teams/:teamId/members/:userId',
    {
      schema: {
        operationId: 'deleteMemberFromOrganizationTeamById',
        tags: memberTags,
        params: TeamMemberParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      const { organizationId, teamId, userId } = req.params;
      await removeTeamMember(req.ctx(), organizationId, teamId, userId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/orgs/:organizationId/members/:userId/teams',
    {
      schema: {
        operationId: 'listTeamsForOrganizationMember',
        // The official document files this operation under the organization's members.
        tags: ['organization-members'],
        params: MemberParams,
        querystring: ListMemberTeamsQuery,
        response: { 200: ListOf(MemberTeam), ...errorResponses },
      },
    },
    async (req) => {
      const { membership, page } = await listMemberTeams(req.ctx(), req.params.organizationId, req.params.userId, req.query);
      return { ...page, items: page.items.map((t) => presentMemberTeam(t, membership)) };
    },
  );
}
