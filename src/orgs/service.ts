import { SignJWT } from 'jose';
import { checkDocumentInput } from '../platform/document-limits.ts';
import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import { json } from '../platform/db/database.ts';
import type { MergeRules, OrganizationRow, OrganizationUpdate } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { assertAdmin, type Membership } from '../platform/policy.ts';
import { emailDomain } from '../users/service.ts';
import { requireMembership, requireOrganization } from '../access/organizations.ts';
import { assertMembers } from '../access/organizations.ts';
import type { UpdateOrganizationInput } from './schemas.ts';

const EMPTY_DOCUMENT = { object: 'document', data: { schemaVersion: 1 }, nodes: [] };

function normalizeDomains(domains: string[]): string[] {
  return [...new Set(domains.map((d) => d.trim().toLowerCase()))];
}

export async function createOrganization(ctx: Ctx, input: { title: string; emailDomains?: string[] | undefined }) {
  const now = new Date();
  return ctx.db.transaction().execute(async (trx) => {
    const org = await trx
      .insertInto('organizations')
      .values({
        id: newId(),
        title: input.title.trim(),
        email_domains: json(normalizeDomains(input.emailDomains ?? [])),
        hostname: null,
        use_case: null,
        community_type: null,
        default_role: 'read',
        default_content: null,
        logo: null,
        merge_rules: json<MergeRules>({ type: 'none' }),
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('members')
      .values({ organization_id: org.id, user_id: ctx.user.id, role: 'admin', joined_at: now, last_seen_at: now })
      .execute();
    await trx
      .insertInto('agent_instructions')
      .values({ organization_id: org.id, instructions: json(EMPTY_DOCUMENT), updated_at: now, updated_by: ctx.user.id })
      .execute();
    return { org, membership: { role: 'admin', ownsTeam: false } satisfies Membership };
  });
}

/** The caller's organizations, in the order they were created. */
export async function listOrganizations(ctx: Ctx, page: PageRequest) {
  const base = ctx.db
    .selectFrom('organizations')
    .innerJoin('members', 'members.organization_id', 'organizations.id')
    .selectAll('organizations')
    .select((eb) => [
      'members.role as member_role',
      eb
        .exists(
          eb
            .selectFrom('team_members')
            .select(sql`1`.as('one'))
            .whereRef('team_members.organization_id', '=', 'organizations.id')
            .where('team_members.user_id', '=', ctx.user.id)
            .where('team_members.role', '=', 'owner'),
        )
        .as('owns_team'),
    ])
    .where('members.user_id', '=', ctx.user.id)
    .where('members.disabled', '=', false);
  const result = await paginate(
    base,
    { kind: 'orgs', sortExpr: null, seqExpr: sql.ref('organizations.seq'), direction: 'asc' },
    page,
  );
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
  const { membership } = await requireOrganization(ctx, organizationId);
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
  if (input.mergeRules !== undefined) {
    const rules: MergeRules = input.mergeRules.type === 'rules' ? input.mergeRules : { type: 'none' };
    patch.merge_rules = json(rules) as never;
  }
  try {
    const org =
      Object.keys(patch).length === 0
        ? await ctx.db.selectFrom('organizations').selectAll().where('id', '=', organizationId).executeTakeFirstOrThrow()
        : await ctx.db
            .updateTable('organizations')
            .set(patch)
            .where('id', '=', organizationId)
            .returningAll()
            .executeTakeFirstOrThrow();
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
  const org = await ctx.db.selectFrom('organizations').selectAll().where('id', '=', organizationId).executeTakeFirst();
  if (!org) throw notJoinable();
  const already = await ctx.db
    .selectFrom('members')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', ctx.user.id)
    .executeTakeFirst();
  if (already) return;
  const domain = emailDomain(ctx.user.email);
  if (!ctx.user.email_verified || !org.email_domains.includes(domain)) throw notJoinable();
  await ctx.db
    .insertInto('members')
    .values({ organization_id: organizationId, user_id: ctx.user.id, role: org.default_role, joined_at: new Date(), last_seen_at: null })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/**
 * Organizations that accept an email domain. Only the caller's own verified domain reveals
 * organizations they could join; for any other domain, only organizations they already belong to.
 */
export async function organizationsForEmailDomain(ctx: Ctx, domain: string) {
  const wanted = domain.trim().toLowerCase();
  const mine = ctx.user.email_verified && emailDomain(ctx.user.email) === wanted;
  const rows = await ctx.db
    .selectFrom('organizations')
    .leftJoin('members', (join) =>
      join.onRef('members.organization_id', '=', 'organizations.id').on('members.user_id', '=', ctx.user.id),
    )
    .selectAll('organizations')
    .select('members.role as member_role')
    .select('members.user_id as member_user')
    .where(sql<boolean>`organizations.email_domains @> ${JSON.stringify([wanted])}::jsonb`)
    .$if(!mine, (q) => q.where('members.user_id', 'is not', null))
    .orderBy('organizations.seq')
    .limit(1000)
    .execute();
  return rows.map(({ member_role, member_user, ...org }) => ({
    org: org as OrganizationRow,
    membership: member_user ? ({ role: member_role, ownsTeam: false } as Membership) : undefined,
  }));
}

/** Records that the member was seen and returns signed claims about them. */
export async function ping(ctx: Ctx, organizationId: string): Promise<string> {
  const membership = await requireMembership(ctx, organizationId);
  const now = new Date();
  await ctx.db
    .updateTable('members')
    .set({ last_seen_at: now })
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', ctx.user.id)
    .execute();
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
  return ctx.db
    .selectFrom('agent_instructions')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
}

export async function updateAgentInstructions(ctx: Ctx, organizationId: string, instructions: unknown) {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, 'change the agent instructions');
  checkDocumentInput(instructions, 'instructions');
  return ctx.db
    .updateTable('agent_instructions')
    .set({ instructions: json(instructions), updated_at: new Date(), updated_by: ctx.user.id })
    .where('organization_id', '=', organizationId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
