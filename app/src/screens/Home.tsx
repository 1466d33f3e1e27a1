import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Redirect, useLocation } from 'wouter';
import { errorText } from '../api/client.ts';
import { useOrganizations } from '../api/queries.ts';
import { createOrganization } from '../components/NewDialogs.tsx';

/** The app's start: the first organization, or a form to create one. */
export default function Home() {
  const organizations = useOrganizations();
  if (organizations.isPending) return <p className="loading" role="status">Loading…</p>;
  const first = organizations.data?.[0];
  if (first) return <Redirect to={`/o/${first.id}`} replace />;
  return <CreateOrganization />;
}

function CreateOrganization() {
  const [title, setTitle] = useState('');
  const [error, setError] = useState<string>();
  const id = useId();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  async function submit(event: FormEvent) {
    event.preventDefault();
    try {
      const org = await createOrganization(queryClient, title);
      navigate(`/o/${org.id}`);
    } catch (err) {
      setError(errorText(err));
    }
  }
  return (
    <main className="centered">
      <div className="card narrow">
        <h1>Create your organization</h1>
        <p>Spaces, sites and members belong to an organization.</p>
        <form className="form" onSubmit={submit}>
          <label htmlFor={`${id}-title`}>Organization name</label>
          <input id={`${id}-title`} required maxLength={100} value={title} onChange={(e) => setTitle(e.target.value)} />
          {error && <p role="alert" className="error">{error}</p>}
          <button type="submit" className="primary">Create organization</button>
        </form>
      </div>
    </main>
  );
}
