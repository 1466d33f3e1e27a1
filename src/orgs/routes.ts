import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { OrganizationIdParams } from '../platform/schemas.ts';
import { requireOrganization } from '../access/organizations.ts';
import { presentAgentInstructions, presentOrganization } from './presenter.ts';
import {
  AgentInstructions,
  CreateOrganizationBody,
  Organization,
  PingResponse,
  UpdateOrganizationBody,
} from './schemas.ts';
import {
  createOrganization,
  getAgentInstructions,
  joinOrganization,
  listOrganizations,
  organizationsForEmailDomain,
  ping,
  updateAgentInstructions,
  updateOrganization,
} from './service.ts';
import { Document } from '../platform/schemas.ts';

const tags = ['organizations'];

export async function organizationRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs',
    {
      schema: {
        operationId: 'listOrganizationsForAuthenticatedUser',
        tags,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(Organization), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const page = await listOrganizations(ctx, req.query);
      return { ...page, items: page.items.map((i) => presentOrganization(ctx.urls, i.org, i.membership)) };
    },
  );

  app.post(
    '/orgs',
    {
      schema: {
        operationId: 'createOrganization',
        tags,
        body: CreateOrganizationBody,
        response: { 201: Organization, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { org, membership } = await createOrganization(ctx, req.body);
      reply.status(201).header('location', ctx.urls.organization(org.id));
      return presentOrganization(ctx.urls, org, membership);
    },
  );

  app.get(
    '/orgs/:organizationId',
    {
      schema: {
        operationId: 'getOrganizationById',
        tags,
        params: OrganizationIdParams,
        response: { 200: Organization, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { org, membership } = await requireOrganization(ctx, req.params.organizationId);
      return presentOrganization(ctx.urls, org, membership);
    },
  );

  app.patch(
    '/orgs/:organizationId',
    {
      schema: {
        operationId: 'updateOrganizationById',
        tags,
        params: OrganizationIdParams,
        body: UpdateOrganizationBody,
        response: { 200: Organization, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { org, membership } = await updateOrganization(ctx, req.params.organizationId, req.body);
      return presentOrganization(ctx.urls, org, membership);
    },
  );

  app.post(
    '/orgs/:organizationId/join',
    {
      schema: {
        operationId: 'joinOrganization',
        tags,
        params: OrganizationIdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await joinOrganization(req.ctx(), req.params.organizationId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/email-domains/:emailDomain/orgs',
    {
      schema: {
        operationId: 'getOrganizationsForEmailDomain',
        tags,
        params: Type.Object({ emailDomain: Type.String({ maxLength: 253 }) }),
        response: { 200: Type.Object({ organizations: Type.Array(Organization) }), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const rows = await organizationsForEmailDomain(ctx, req.params.emailDomain);
      return { organizations: rows.map((r) => presentOrganization(ctx.urls, r.org, r.membership)) };
    },
  );

  app.post(
    '/orgs/:organizationId/ping',
    {
      schema: {
        operationId: 'updateOrganizationMemberLastSeenAt',
        tags: ['organization-members'],
        params: OrganizationIdParams,
        response: { 200: PingResponse, ...errorResponses },
      },
    },
    async (req) => {
      const claims = await ping(req.ctx(), req.params.organizationId);
      return { serviceVisitorClaims: claims, gitbookVisitorClaims: claims };
    },
  );

  app.get(
    '/orgs/:organizationId/agent-instructions',
    {
      schema: {
        operationId: 'getOrganizationAgentInstructions',
        tags,
        params: OrganizationIdParams,
        response: { 200: AgentInstructions, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return presentAgentInstructions(ctx.urls, await getAgentInstructions(ctx, req.params.organizationId));
    },
  );

  app.put(
    '/orgs/:organizationId/agent-instructions',
    {
      schema: {
        operationId: 'updateOrganizationAgentInstructions',
        tags,
        params: OrganizationIdParams,
        body: Type.Object({ instructions: Document }),
        response: { 200: AgentInstructions, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return presentAgentInstructions(ctx.urls, await updateAgentInstructions(ctx, req.params.organizationId, req.body.instructions));
    },
  );
}
