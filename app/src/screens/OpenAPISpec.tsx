import { useQuery } from '@tanstack/react-query';
import type { OpenAPISpec as Spec, OpenAPISpecVersion } from '@gitbook/api';
import { api, listAll } from '../api/client.ts';
import { Sidebar } from '../components/Shell.tsx';
import { timeAgo } from '../format.ts';
import NotFound from './NotFound.tsx';

/** An OpenAPI specification of the organization: where it comes from, its processing state and versions. */
export default function OpenAPISpec({ orgId, slug }: { orgId: string; slug: string }) {
  const path = `/orgs/${orgId}/openapi/${encodeURIComponent(slug)}`;
  const spec = useQuery({ queryKey: ['openapi', orgId, slug], queryFn: () => api.get<Spec>(path) });
  const versions = useQuery({ queryKey: ['openapi', orgId, slug, 'versions'], queryFn: () => listAll<OpenAPISpecVersion>(`${path}/versions`) });
  if (spec.isError) return <NotFound />;
  const s = spec.data;
  return (
    <div className="layout">
      <Sidebar orgId={orgId} />
      <main className="content">
        <h1>OpenAPI: {slug}</h1>
        {s && (
          <dl className="facts">
            <dt>Source</dt>
            <dd>{s.sourceURL ? <a href={s.sourceURL}>{s.sourceURL}</a> : 'Uploaded file'}</dd>
            <dt>State</dt>
            <dd>{s.processingState}{s.lastProcessedErrorCount ? ` (${s.lastProcessedErrorCount} errors)` : ''}</dd>
            {s.lastProcessedAt && (
              <>
                <dt>Last processed</dt>
                <dd>{timeAgo(s.lastProcessedAt)}</dd>
              </>
            )}
          </dl>
        )}
        <h2>Versions</h2>
        <ul>
          {(versions.data ?? []).map((v) => (
            <li key={v.id}>
              <a href={v.url}>{v.id}</a>
              {v.createdAt ? ` · ${timeAgo(v.createdAt)}` : ''}
            </li>
          ))}
        </ul>
      </main>
    </div>
  );
}
