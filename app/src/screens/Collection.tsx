import { useState } from 'react';
import { Link } from 'wouter';
import { useCollection, useCollectionSpaces, useTitle } from '../api/queries.ts';
import { NewSpaceDialog } from '../components/NewDialogs.tsx';
import { Sidebar } from '../components/Shell.tsx';
import { emojiText } from '../format.ts';
import NotFound from './NotFound.tsx';

/** A collection: the spaces it groups. */
export default function Collection({ collectionId }: { collectionId: string }) {
  const collection = useCollection(collectionId);
  const spaces = useCollectionSpaces(collectionId);
  const [creating, setCreating] = useState(false);
  useTitle(collection.data?.title);
  if (collection.isError) return <NotFound />;
  if (!collection.data) return <p className="loading" role="status">Loading…</p>;
  return (
    <div className="layout">
      <Sidebar orgId={collection.data.organization} current={collectionId} />
      <main className="content">
        <h1>{collection.data.title}</h1>
        {collection.data.description && <p>{collection.data.description}</p>}
        <h2>Spaces</h2>
        {spaces.data && spaces.data.length === 0 && <p className="muted">This collection holds no space yet.</p>}
        {collection.data.permissions.create && (
          <div className="toolbar">
            <button type="button" onClick={() => setCreating(true)}>
              New space in this collection
            </button>
          </div>
        )}
        {creating && <NewSpaceDialog orgId={collection.data.organization} collectionId={collectionId} onClose={() => setCreating(false)} />}
        <ul className="cards">
          {(spaces.data ?? []).map((space) => (
            <li key={space.id} className="card">
              <Link href={`/s/${space.id}`}>
                {emojiText(space.emoji)} {space.title || 'Untitled'}
              </Link>
            </li>
          ))}
        </ul>
      </main>
    </div>
  );
}
