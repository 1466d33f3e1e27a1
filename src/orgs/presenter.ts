import type { Selectable } from 'kysely';
import type { AgentInstructionsTable, MergeRules, OrganizationRow } from '../platform/db/schema.ts';
import { organizationPermissions, type Membership } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import type { OrganizationResource } from './schemas.ts';

/** Organizations do not inherit merge rules from anything: stored "inherit" reads as "none". */
function presentMergeRules(rules: MergeRules): OrganizationResource['mergeRules'] {
  return rules.type === 'rules' ? { type: 'rules', rules: rules.rules ?? [] } : { type: 'none' };
}

export function presentOrganization(urls: Urls, org: OrganizationRow, membership: Membership | undefined): OrganizationResource {
  return {
    object: 'organization',
    id: org.id,
    title: org.title,
    createdAt: org.created_at.toISOString(),
    emailDomains: org.email_domains,
    ...(org.hostname ? { hostname: org.hostname } : {}),
    type: org.type,
    ...(org.use_case ? { useCase: org.use_case } : {}),
    ...(org.community_type ? { communityType: org.community_type } : {}),
    defaultRole: org.default_role,
    ...(org.default_content ? { defaultContent: org.default_content } : {}),
    sso: org.sso,
    ai: org.ai,
    inviteLinks: org.invite_links,
    // Self-hosted: no billing. The plan name is the one the official schema knows for that.
    plan: 'free_2024',
    mergeRules: presentMergeRules(org.merge_rules),
    urls: {
      location: urls.organization(org.id),
      app: urls.organizationApp(org.id),
      ...(org.logo ? { logo: org.logo } : {}),
    },
    trial: { status: 'notapplicable', count: 0 },
    permissions: organizationPermissions(membership),
    ...(org.language ? { language: org.language } : {}),
  };
}

export function presentAgentInstructions(urls: Urls, row: Selectable<AgentInstructionsTable>) {
  return {
    object: 'agent-instructions' as const,
    instructions: row.instructions as never,
    updatedAt: row.updated_at.toISOString(),
    updatedBy: row.updated_by,
    urls: { location: urls.api(`/orgs/${row.organization_id}/agent-instructions`) },
  };
}
