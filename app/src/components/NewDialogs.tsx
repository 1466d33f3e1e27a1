import { type QueryClient, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import type { Collection, Organization, Space } from '@gitbook/api';
import { api, errorText } from '../api/client.ts';
import { keys } from '../api/queries.ts';
import { Dialog, FormActions } from './Dialog.tsx';
import { appHref } from '../paths.ts';

/**
 * A dialog that names something new (a space, a collection, an organization): one field, then
 * `create`, which answers where the new thing's screen is. The API's refusal shows as it says it.
 */
function NameDialog({ title, label, submit, create, onClose }: { title: string; label: string; submit: string; create: (name: string) => Promise<string>; onClose: () => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = useId();
  const [, navigate] = useLocation();

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      const path = await create(name);
      onClose();
      navigate(appHref(path));
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }

  return (
    <Dialog title={title} onClose={onClose}>
      <form className="form" onSubmit={onSubmit}>
        <label htmlFor={`${id}-name`}>{label}</label>
        <input id={`${id}-name`} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} autoFocus />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <FormActions submit={submit} busy={busy} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** A new space of the organization, in a collection when `collectionId` is given. */
export function NewSpaceDialog({ orgId, collectionId, onClose }: { orgId: string; collectionId?: string; onClose: () => void }) {
  const queryClient = useQueryClient();
  return (
    <NameDialog
      title={collectionId ? 'New space in this collection' : 'New space'}
      label="Space title"
      submit="Create space"
      onClose={onClose}
      create={async (title) => {
        const space = await api.post<Space>(`/orgs/${orgId}/spaces`, { title, ...(collectionId ? { parent: collectionId } : {}) });
        await queryClient.invalidateQueries({ queryKey: keys.orgSpaces(orgId) });
        if (collectionId) await queryClient.invalidateQueries({ queryKey: keys.collectionSpaces(collectionId) });
        return `/s/${space.id}`;
      }}
    />
  );
}

/** A new collection of the organization: spaces are then created in it from its screen. */
export function NewCollectionDialog({ orgId, onClose }: { orgId: string; onClose: () => void }) {
  const queryClient = useQueryClient();
  return (
    <NameDialog
      title="New collection"
      label="Collection title"
      submit="Create collection"
      onClose={onClose}
      create={async (title) => {
        const collection = await api.post<Collection>(`/orgs/${orgId}/collections`, { title });
        await queryClient.invalidateQueries({ queryKey: keys.orgCollections(orgId) });
        return `/c/${collection.id}`;
      }}
    />
  );
}

/** A new organization, with the person as its admin; the lists of organizations are read again. */
export async function createOrganization(queryClient: QueryClient, title: string): Promise<Organization> {
  const org = await api.post<Organization>('/orgs', { title });
  await queryClient.invalidateQueries({ queryKey: keys.organizations });
  return org;
}

/** Another organization, with the person as its admin. */
export function NewOrganizationDialog({ onClose }: { onClose: () => void }) {
  const queryClient = useQueryClient();
  return (
    <NameDialog
      title="New organization"
      label="Organization name"
      submit="Create organization"
      onClose={onClose}
      create={async (title) => `/o/${(await createOrganization(queryClient, title)).id}`}
    />
  );
}
