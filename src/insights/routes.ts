import { Type, type Static } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf } from '../platform/paging.ts';
import { presentCluster, presentConversation, presentConversationWithContent, presentIssue } from './presenter.ts';
import {
  Cluster,
  ClusterParams,
  ConversationParams,
  ConversationWithContent,
  Conversation,
  IngestBody,
  IssueParams,
  IssueWithConversation,
  ListClustersQuery,
  ListConversationsQuery,
  ListIssuesQuery,
  OrgParams,
  UpdateClusterBody,
} from './schemas.ts';
import { getCluster, getConversation, getIssue, ingestConversations, listClusters, listConversations, listIssues, updateCluster } from './service.ts';

const tags = ['conversations'];

export async function insightRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs/:organizationId/conversations-clusters',
    { schema: { operationId: 'listConversationsClusters', tags, params: OrgParams, querystring: ListClustersQuery, response: { 200: ListOf(Cluster), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { figures, ...page } = await listClusters(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map((row) => presentCluster(ctx.urls, row, figures.get(row.id)!)) };
    },
  );

  app.get(
    '/orgs/:organizationId/conversations-clusters/:clusterId',
    { schema: { operationId: 'getConversationsCluster', tags, params: ClusterParams, response: { 200: Cluster, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { row, figures } = await getCluster(ctx, req.params.organizationId, req.params.clusterId);
      return presentCluster(ctx.urls, row, figures);
    },
  );

  app.patch(
    '/orgs/:organizationId/conversations-clusters/:clusterId',
    { schema: { operationId: 'updateConversationsCluster', tags, params: ClusterParams, body: UpdateClusterBody, response: { 200: Cluster, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { row, figures } = await updateCluster(ctx, req.params.organizationId, req.params.clusterId, req.body);
      return presentCluster(ctx.urls, row, figures);
    },
  );

  app.get(
    '/orgs/:organizationId/conversations',
    { schema: { operationId: 'listConversations', tags, params: OrgParams, querystring: ListConversationsQuery, response: { 200: ListOf(Conversation), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const page = await listConversations(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map((row) => presentConversation(ctx.urls, row)) };
    },
  );

  // The body's type comes from its schema here: the type provider does not infer one from if/then/else.
  app.post<{ Params: Static<typeof OrgParams>; Body: Static<typeof IngestBody> }>(
    '/orgs/:organizationId/conversations',
    {
      schema: {
        operationId: 'ingestConversations',
        tags,
        params: OrgParams,
        body: IngestBody,
        response: { 204: Type.Null({ description: 'Conversations ingested; processing runs in the background' }), ...errorResponses },
      },
    },
    async (req, reply) => {
      if (req.body === undefined) return reply.status(400).send({ error: { code: 400, message: 'Body required: one conversation, or an array of conversations' } });
      await ingestConversations(req.ctx(), req.params.organizationId, req.body);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/orgs/:organizationId/conversations-issues',
    { schema: { operationId: 'listConversationsIssues', tags, params: OrgParams, querystring: ListIssuesQuery, response: { 200: ListOf(IssueWithConversation), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const page = await listIssues(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map(({ issue, conversation }) => ({ issue: presentIssue(ctx.urls, issue), conversation: presentConversation(ctx.urls, conversation) })) };
    },
  );

  app.get(
    '/orgs/:organizationId/conversations-issues/:issueId',
    { schema: { operationId: 'getConversationsIssue', tags, params: IssueParams, response: { 200: IssueWithConversation, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { issue, conversation } = await getIssue(ctx, req.params.organizationId, req.params.issueId);
      return { issue: presentIssue(ctx.urls, issue), conversation: presentConversation(ctx.urls, conversation) };
    },
  );

  app.get(
    '/orgs/:organizationId/conversations/:conversationId',
    { schema: { operationId: 'getConversation', tags, params: ConversationParams, response: { 200: ConversationWithContent, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return presentConversationWithContent(ctx.urls, await getConversation(ctx, req.params.organizationId, req.params.conversationId));
    },
  );
}
