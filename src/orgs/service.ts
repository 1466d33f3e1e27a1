import { SignJWT } from 'jose';
import { checkDocumentInput } from '../platform/document-limits.ts';
import type { Ctx } from '../platform/context.ts';
import { json } from '../platform/db/database.ts';
import type { MergeRules, OrganizationRow, OrganizationUpdate } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertAdmin, type Membership } from '../platform/policy.ts';
import { emailDomain } from '../users/service.ts';
import { requireMembership, requireOrganization } from '../access/organizations.ts';
import { assertMembers } from '../access/organizations.ts';
import { organizationHooks } from './hooks.ts';
import type { UpdateOrganizationInput } from './schemas.ts';
import * as store from './store.ts';

function normalizeDomains(domains: string[]): string[] {
  return [...new Set(domains.map((d) => d.trim().toLowerCase()))];
}

export async function createOrganization(ctx: Ctx, input: { title: string; emailDomains?: string[] | undefined }) {
  const now = new Date();
  return ctx.db.transaction().execute(async (trx) => {
    const org = await store.insertOrganization(trx, {
      title: input.title.trim(),
      emailDomains: normalizeDomains(input.emailDomains ?? []),
      adminId: ctx.user.id,
      now,
    });
    return { org, membership: { role: 'admin', ownsTeam: false } satisfies Membership };
  });
}

/** The caller's organizations, in the order they were created. */
export async function listOrganizations(ctx: Ctx, page: PageRequest) {
  const result = await store.listOrganizationsOf(ctx.db, ctx.user.id, page);
  return {
    ...result,
    items: result.items.map(({ member_role, owns_team, ...org }) => ({
      org: org as OrganizationRow,
      membership: { role: member_role, ownsTeam: !!owns_team } as Membership,
    })),
  };
}

async function validateMergeRules(ctx: Ctx, organizationId: string, rules: UpdateOrganizationInput['mergeRules']) {
  if (rules?.type === 'rules') await assertMembers(ctx.db, organizationId, rules.rules.flatMap((r) => r.users), 'mergeRules');
}

export async function updateOrganization(ctx: Ctx, organizationId: string, input: UpdateOrganizationInput) {
  const { org: current, membership } = await requireOrganization(ctx, organizationId);
  assertAdmin(membership, 'change the organization');
  await validateMergeRules(ctx, organizationId, input.mergeRules);
  if (input.defaultContent) {
    // Docs sites are not part of this server yet, so no site id can be valid.
    throw new BadRequestError(`defaultContent: site ${input.defaultContent.site} not found in this organization`);
  }
  const patch: OrganizationUpdate = {};
  if (input.title !== undefined) patch.title = input.title.trim();
  if (input.emailDomains !== undefined) patch.email_domains = json(normalizeDomains(input.emailDomains)) as never;
  if (input.hostname !== undefined) patch.hostname = input.hostname;
  if (input.defaultRole !== undefined) patch.default_role = input.defaultRole;
  if (input.defaultContent === null) patch.default_content = null;
  if (input.logo !== undefined) patch.logo = input.logo;
  if (input.sso !== undefined) patch.sso = input.sso;
  if (input.ai !== undefined) patch.ai = input.ai;
  if (input.inviteLinks !== undefined) patch.invite_links = input.inviteLinks;
  if (input.language !== undefined) patch.language = input.language;
  if (input.mergeRules !== undefined) {
    const rules: MergeRules = input.mergeRules.type === 'rules' ? input.mergeRules : { type: 'none' };
    patch.merge_rules = json(rules) as never;
  }
  try {
    const languageChanged = input.language !== undefined && input.language !== current.language;
    const org = await ctx.db.transaction().execute(async (trx) => {
      const row = await store.updateOrganizationRow(trx, organizationId, patch);
      if (languageChanged) await organizationHooks.run('languageChanged', trx, { organizationId, jobs: ctx.jobs });
      return row;
    });
    // Which tokens may reach the organization depends on its SSO enforcement (see sso-gate.ts).
    if (input.sso !== undefined) ctx.tokenCache.clear();
    return { org, membership };
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`Hostname "${input.hostname}" is already used by another organization`);
    throw err;
  }
}

/**
 * Joins an organization whose allowed email domains include the caller's verified email domain.
 * To anyone it would not admit it answers as for an organization that does not exist (404, the
 * same message), so the endpoint does not tell outsiders which organization ids exist.
 */
export async function joinOrganization(ctx: Ctx, organizationId: string): Promise<void> {
  const notJoinable = () => new NotFoundError('Organization', 'no organization with this id accepts your verified email domain');
  const org = await store.findOrganization(ctx.db, organizationId);
  if (!org) throw notJoinable();
  if (await store.isMember(ctx.db, organizationId, ctx.user.id)) return;
  const domain = emailDomain(ctx.user.email);
  if (!ctx.user.email_verified || !org.email_domains.includes(domain)) throw notJoinable();
  await store.addMember(ctx.db, organizationId, ctx.user.id, org.default_role);
}

/**
 * Organizations that accept an email domain. Only the caller's own verified domain reveals
 * organizations they could join; for any other domain, only organizations they already belong to.
 */
export async function organizationsForEmailDomain(ctx: Ctx, domain: string) {
  const wanted = domain.trim().toLowerCase();
  const mine = ctx.user.email_verified && emailDomain(ctx.user.email) === wanted;
  const rows = await store.organizationsAccepting(ctx.db, wanted, ctx.user.id, !mine);
  return rows.map(({ member_role, member_user, ...org }) => ({
    org: org as OrganizationRow,
    membership: member_user ? ({ role: member_role, ownsTeam: false } as Membership) : undefined,
  }));
}

/** Records that the member was seen and returns signed claims about them. */
export async function ping(ctx: Ctx, organizationId: string): Promise<string> {
  const membership = await requireMembership(ctx, organizationId);
  const now = new Date();
  await store.touchMember(ctx.db, organizationId, ctx.user.id, now);
  return new SignJWT({
    organization: organizationId,
    role: membership.role,
    email: ctx.user.email,
    name: ctx.user.display_name,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(ctx.user.id)
    .setIssuer(ctx.config.publicUrl)
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime('1h')
    .sign(ctx.signingKey);
}

export async function getAgentInstructions(ctx: Ctx, organizationId: string) {
  await requireMembership(ctx, organizationId);
  return store.agentInstructions(ctx.db, organizationId);
}

export async function updateAgentInstructions(ctx: Ctx, organizationId: string, instructions: unknown) {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, 'change the agent instructions');
  checkDocumentInput(instructions, 'instructions');
  return store.setAgentInstructions(ctx.db, organizationId, instructions, ctx.user.id);
}
