import { useQuery } from '@tanstack/react-query';
import type { Integration as IntegrationObject } from '@gitbook/api';
import { api } from '../api/client.ts';
import { Sidebar } from '../components/Shell.tsx';
import { useOrganizations } from '../api/queries.ts';
import NotFound from './NotFound.tsx';

/** An integration: what it is, who publishes it, what it may do. Installing stays in the API for now. */
export default function Integration({ orgId, name }: { orgId?: string; name: string }) {
  const integration = useQuery({ queryKey: ['integration', name], queryFn: () => api.get<IntegrationObject>(`/integrations/${encodeURIComponent(name)}`) });
  const organizations = useOrganizations();
  const org = orgId ?? organizations.data?.[0]?.id;
  if (integration.isError) return <NotFound />;
  const i = integration.data;
  const body = (
    <main className="content">
      <h1>{i?.title ?? name}</h1>
      {i && (
        <>
          {i.summary && <p>{i.summary}</p>}
          {i.description && <p className="prewrap">{i.description}</p>}
          <dl className="facts">
            <dt>Published by</dt>
            <dd>{i.owner.title}</dd>
            <dt>Visibility</dt>
            <dd>{i.visibility}</dd>
            <dt>Installs on</dt>
            <dd>{i.target}</dd>
            <dt>Scopes</dt>
            <dd>{i.scopes.length ? i.scopes.join(', ') : 'none'}</dd>
          </dl>
        </>
      )}
    </main>
  );
  return org ? (
    <div className="layout">
      <Sidebar orgId={org} />
      {body}
    </div>
  ) : (
    body
  );
}
