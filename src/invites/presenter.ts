import { inviteIsRedundant } from '../platform/policy.ts';
import type { InviteLinkResource } from './schemas.ts';
import type { InviteLinkView } from './service.ts';

export function presentInviteLink({ invite, membership }: InviteLinkView): InviteLinkResource {
  return {
    object: 'invite',
    id: invite.id,
    role: invite.role,
    redundant: inviteIsRedundant(invite.role, membership),
  };
}
