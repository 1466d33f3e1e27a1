import type { TeamMemberRole } from '../platform/db/schema.ts';
import { canListPeople, teamPermissions, type Membership } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import { presentMember } from '../members/presenter.ts';
import type { MemberView } from '../members/store.ts';
import type { TeamResource } from './schemas.ts';
import type { TeamView } from './store.ts';

/** A team as the caller sees it: `permissions` come from the same policy the services enforce. */
export function presentTeam(team: TeamView, caller: Membership): TeamResource {
  return {
    object: 'team',
    id: team.id,
    title: team.title,
    members: team.member_count,
    spaces: team.space_count,
    createdAt: team.created_at.toISOString(),
    permissions: teamPermissions(caller, team.caller_role ?? undefined),
  };
}

export function presentTeamMember(urls: Urls, member: MemberView & { team_role: TeamMemberRole }, caller: Membership) {
  return {
    organization: presentMember(urls, member),
    team: { role: member.team_role },
    permissions: { view: canListPeople(caller) },
  };
}

export function presentMemberTeam(team: TeamView & { member_role: TeamMemberRole }, caller: Membership) {
  return {
    team: presentTeam(team, caller),
    member: { role: team.member_role },
  };
}
