import type { ConversationIssueRow, ConversationRow, IssuesClusterRow } from '../platform/db/schema.ts';
import type { Urls } from '../platform/urls.ts';

const org = (urls: Urls, organizationId: string, path: string) => urls.api(`/orgs/${encodeURIComponent(organizationId)}${path}`);

interface StoredMetadata {
  url?: string;
  attributes?: Record<string, string>;
}

export function presentConversation(urls: Urls, row: ConversationRow) {
  const metadata = row.metadata as StoredMetadata;
  return {
    object: 'conversation' as const,
    id: row.id,
    subject: row.subject,
    createdAt: row.created_at.toISOString(),
    ...(row.processed_at ? { processedAt: row.processed_at.toISOString() } : {}),
    source: row.source,
    ...(row.impact ? { impact: row.impact } : {}),
    urls: {
      location: org(urls, row.organization_id, `/conversations/${encodeURIComponent(row.id)}`),
      ...(metadata.url ? { source: metadata.url } : {}),
    },
  };
}

export function presentConversationWithContent(urls: Urls, row: ConversationRow) {
  const metadata = row.metadata as StoredMetadata;
  return {
    conversation: presentConversation(urls, row),
    parts: row.parts as { type: 'message'; role: 'user' | 'assistant' | 'agent'; body: string }[],
    metadata: {
      ...(metadata.url ? { url: metadata.url } : {}),
      attributes: metadata.attributes ?? {},
      createdAt: row.created_at.toISOString(),
    },
  };
}

export function presentIssue(urls: Urls, row: ConversationIssueRow) {
  return {
    object: 'conversation-issue' as const,
    id: row.id,
    title: row.title,
    details: row.details as never,
    impact: row.impact,
    createdAt: row.created_at.toISOString(),
    ingestedAt: row.ingested_at.toISOString(),
    conversation: row.conversation_id,
    ...(row.cluster_id ? { cluster: row.cluster_id } : {}),
    urls: { location: org(urls, row.organization_id, `/conversations-issues/${row.id}`) },
  };
}

export interface ClusterFigures {
  weeklyPulse: number[];
  sources: Record<string, number>;
  stats: { issues: number; conversations: number };
  pages: { space: string; page: string; title: string; path: string; urls: { app: string } }[];
}

export function presentCluster(urls: Urls, row: IssuesClusterRow, figures: ClusterFigures) {
  return {
    object: 'issues-cluster' as const,
    id: row.id,
    label: row.label,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    icon: row.icon,
    summary: row.summary as never,
    muted: row.muted,
    impact: row.impact,
    weeklyPulse: figures.weeklyPulse,
    sources: figures.sources,
    stats: figures.stats,
    pages: figures.pages,
    urls: { location: org(urls, row.organization_id, `/conversations-clusters/${row.id}`) },
  };
}
