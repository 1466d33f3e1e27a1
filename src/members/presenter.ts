import type { Urls } from '../platform/urls.ts';
import { presentUser } from '../users/presenter.ts';
import type { MemberView } from './store.ts';

export function presentMember(urls: Urls, m: MemberView) {
  return {
    object: 'member' as const,
    id: m.user_id,
    role: m.role,
    user: presentUser(urls, { id: m.user_id, email: m.email, display_name: m.display_name, photo_url: m.photo_url }),
    disabled: m.disabled,
    joinedAt: m.joined_at.toISOString(),
    ...(m.last_seen_at ? { lastSeenAt: m.last_seen_at.toISOString() } : {}),
    sso: m.sso,
    spaces: m.space_count,
    teams: m.team_count,
    // Docs sites arrive with a later area.
    sites: 0,
  };
}
