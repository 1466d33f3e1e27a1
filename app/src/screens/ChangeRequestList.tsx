import { useState } from 'react';
import { Link } from 'wouter';
import type { Space } from '@gitbook/api';
import { useChangeRequests } from '../api/queries.ts';
import { timeAgo } from '../format.ts';

const STATUSES = [
  ['open', 'Open'],
  ['draft', 'Drafts'],
  ['merged', 'Merged'],
  ['archived', 'Archived'],
] as const;

/** A space's change requests, by status. */
export default function ChangeRequestList({ space }: { space: Space }) {
  const [status, setStatus] = useState<(typeof STATUSES)[number][0]>('open');
  const list = useChangeRequests(space.id, status);
  return (
    <main className="content">
      <h1>Change requests</h1>
      <div role="group" aria-label="Status" className="segmented">
        {STATUSES.map(([value, label]) => (
          <button key={value} type="button" aria-pressed={status === value} onClick={() => setStatus(value)}>
            {label}
          </button>
        ))}
      </div>
      {list.isError && <p role="alert" className="error">{list.error.message}</p>}
      {list.data && list.data.length === 0 && <p className="muted">No {status} change requests.</p>}
      <ul className="cr-list">
        {(list.data ?? []).map((cr) => (
          <li key={cr.id}>
            <Link href={`/~/changes/${cr.number}`}>
              #{cr.number} {cr.subject || 'Untitled'}
            </Link>
            <span className="muted">
              {' '}
              by {cr.createdBy.displayName}, {timeAgo(cr.updatedAt)}
              {cr.comments ? ` · ${cr.comments} comment${cr.comments === 1 ? '' : 's'}` : ''}
            </span>
          </li>
        ))}
      </ul>
    </main>
  );
}
