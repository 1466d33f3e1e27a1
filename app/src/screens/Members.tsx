import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type { MemberRole, OrganizationMember } from '@gitbook/api';
import { api, errorText } from '../api/client.ts';
import { keys, useOrganization, useTitle } from '../api/queries.ts';
import { ConfirmDialog } from '../components/Dialog.tsx';
import { Sidebar } from '../components/Shell.tsx';
import { useSession } from '../session.tsx';
import { timeAgo } from '../format.ts';
import NotFound from './NotFound.tsx';

/** A member's role as the API writes it (null: guest). */
type MemberRoleOrGuest = `${MemberRole}` | null;

/** The roles of an organization, strongest first, as the API names them (null: guest). */
const ROLES: Array<{ value: MemberRoleOrGuest; label: string }> = [
  { value: 'admin', label: 'Admin' },
  { value: 'create', label: 'Creator' },
  { value: 'edit', label: 'Editor' },
  { value: 'review', label: 'Reviewer' },
  { value: 'comment', label: 'Commenter' },
  { value: 'read', label: 'Reader' },
  { value: null, label: 'Guest' },
];
const roleLabel = (role: MemberRoleOrGuest) => ROLES.find((r) => r.value === role)?.label ?? String(role);
/** A <select> holds strings: a guest is "guest" there, null in the API. */
const toOption = (role: MemberRoleOrGuest) => role ?? 'guest';
const fromOption = (value: string): MemberRoleOrGuest => (value === 'guest' ? null : (value as MemberRoleOrGuest));

const PAGE_SIZE = 50;

/**
 * An organization's members: who they are and their role, a page at a time (sorted by name,
 * searchable). Admins change roles, remove members and invite people by email; the API decides
 * (an admin cannot demote or remove the last admin) and its message is shown as it is.
 */
export default function Members({ orgId }: { orgId: string }) {
  const org = useOrganization(orgId);
  const { session } = useSession();
  const queryClient = useQueryClient();
  const searchId = useId();
  const [search, setSearch] = useState('');
  const [message, setMessage] = useState<{ kind: 'error' | 'ok'; text: string }>();
  const [removing, setRemoving] = useState<OrganizationMember>();
  useTitle(org.data ? `Members of ${org.data.title}` : undefined);

  const membersKey = [...keys.organization(orgId), 'members'] as const;
  const me = useQuery({
    queryKey: [...membersKey, 'me'],
    queryFn: () => api.get<OrganizationMember>(`/orgs/${orgId}/members/${session!.user.id}`),
    enabled: !!session,
  });
  const members = useInfiniteQuery({
    queryKey: [...membersKey, 'list', search.trim()],
    queryFn: ({ pageParam }) =>
      api.get<{ items: OrganizationMember[]; next?: { page: string }; count?: number }>(`/orgs/${orgId}/members`, {
        limit: PAGE_SIZE,
        page: pageParam,
        sort: 'name',
        search: search.trim() || undefined,
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next?.page,
  });
  const isAdmin = me.data?.role === 'admin';

  /** Says what happened, and reads the members again. */
  async function settle(said: { kind: 'error' | 'ok'; text: string }) {
    setMessage(said);
    await queryClient.invalidateQueries({ queryKey: membersKey });
  }

  async function act(run: () => Promise<unknown>, done: string) {
    setMessage(undefined);
    try {
      await run();
      await settle({ kind: 'ok', text: done });
    } catch (err) {
      await settle({ kind: 'error', text: errorText(err) });
    }
  }

  if (org.isError) return <NotFound />;
  const items = members.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <div className="layout">
      <Sidebar orgId={orgId} />
      <main className="content members">
        <h1>Members</h1>
        {isAdmin && <InviteForm orgId={orgId} onInvited={(text) => void settle({ kind: 'ok', text })} />}
        <div className="members-search">
          <label htmlFor={searchId}>Search members</label>
          <input id={searchId} type="search" placeholder="Name or email" value={search} onChange={(e) => setSearch(e.target.value)} />
        </div>
        {message && (
          <p role={message.kind === 'error' ? 'alert' : 'status'} className={message.kind === 'error' ? 'error' : 'ok'}>
            {message.text}
          </p>
        )}
        {members.isError && (
          <p role="alert" className="error">
            {members.error.message}
          </p>
        )}
        {/* Scrolled sideways on a narrow screen; focusable so the keyboard can scroll it too. */}
        <div className="table-scroll" role="region" aria-label="Members list" tabIndex={0}>
          <table className="members-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                {isAdmin && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {items.map((m) => {
                const name = m.user.displayName || m.user.email || m.id;
                return (
                  <tr key={m.id}>
                    <th scope="row">
                      {name}
                      {m.id === session?.user.id && <span className="muted"> (you)</span>}
                      {m.disabled && <span className="badge">disabled</span>}
                    </th>
                    <td>{m.user.email}</td>
                    <td>
                      {isAdmin ? (
                        <select
                          aria-label={`Role of ${name}`}
                          value={toOption(m.role as MemberRoleOrGuest)}
                          onChange={(e) => {
                            const role = fromOption(e.target.value);
                            void act(() => api.patch(`/orgs/${orgId}/members/${m.id}`, { role }), `${name} is now ${roleLabel(role)}.`);
                          }}
                        >
                          {ROLES.map((r) => (
                            <option key={toOption(r.value)} value={toOption(r.value)}>
                              {r.label}
                            </option>
                          ))}
                        </select>
                      ) : (
                        roleLabel(m.role as MemberRoleOrGuest)
                      )}
                    </td>
                    <td>{timeAgo(m.joinedAt)}</td>
                    {isAdmin && (
                      <td>
                        <button type="button" aria-label={`Remove ${name}`} onClick={() => setRemoving(m)}>
                          Remove
                        </button>
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        {members.data && items.length === 0 && <p className="muted">{search.trim() ? 'No member matches this search.' : 'No members.'}</p>}
        {members.hasNextPage && (
          <button type="button" disabled={members.isFetchingNextPage} onClick={() => void members.fetchNextPage()}>
            Show more members
          </button>
        )}
        {removing && (
          <ConfirmDialog
            title={`Remove ${removing.user.displayName || removing.user.email} from ${org.data?.title ?? 'the organization'}?`}
            confirm="Remove member"
            danger
            onConfirm={() => void act(() => api.delete(`/orgs/${orgId}/members/${removing.id}`), `${removing.user.displayName || removing.user.email} was removed.`)}
            onClose={() => setRemoving(undefined)}
          >
            <p>They lose access to the organization's spaces at once. Their pages and comments stay.</p>
          </ConfirmDialog>
        )}
      </main>
    </div>
  );
}

/**
 * Invites people by email (admins). People who have a Folio account become members at once;
 * the others when their account is created (by the operator, or at their first single sign-on):
 * Folio sends no email, so the message says so.
 */
function InviteForm({ orgId, onInvited }: { orgId: string; onInvited: (text: string) => void }) {
  const id = useId();
  const [emails, setEmails] = useState('');
  const [role, setRole] = useState<string>('read');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const list = emails
      .split(/[\s,;]+/)
      .map((e) => e.trim())
      .filter(Boolean);
    if (list.length === 0) return setError('Enter at least one email address.');
    setBusy(true);
    setError(undefined);
    try {
      const result = await api.post<{ users: string[]; invited: number }>(`/orgs/${orgId}/invites`, { emails: list, role: fromOption(role) });
      setEmails('');
      const added = result.users.length;
      const waiting = result.invited - added;
      onInvited(
        [
          `${added} ${added === 1 ? 'person' : 'people'} added as ${roleLabel(fromOption(role))}.`,
          waiting === 1 ? 'The other address is already a member, or has no Folio account yet: it joins once its account is created (folio users create, or a first single sign-on).' : '',
          waiting > 1 ? `The other ${waiting} addresses are already members, or have no Folio account yet: they join once their account is created (folio users create, or a first single sign-on).` : '',
        ]
          .filter(Boolean)
          .join(' '),
      );
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="form invite-form" onSubmit={submit} aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Invite people</h2>
      <label htmlFor={`${id}-emails`}>Email addresses</label>
      <textarea id={`${id}-emails`} rows={2} placeholder="ann@example.com, bob@example.com" value={emails} onChange={(e) => setEmails(e.target.value)} />
      <label htmlFor={`${id}-role`}>Role</label>
      <select id={`${id}-role`} value={role} onChange={(e) => setRole(e.target.value)}>
        {ROLES.map((r) => (
          <option key={toOption(r.value)} value={toOption(r.value)}>
            {r.label}
          </option>
        ))}
      </select>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy}>
        Invite
      </button>
    </form>
  );
}
