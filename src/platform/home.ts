import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { projectPath } from './project-files.ts';

/** Where a visitor of `GET /` can go: the API, its reference and description, the health checks. */
function links(base: string) {
  return {
    api: `${base}/v1`,
    docs: `${base}/docs`,
    openapi: `${base}/v1/openapi.json`,
    health: `${base}/healthz`,
    readiness: `${base}/readyz`,
  };
}

const DESCRIPTION = 'A self-hostable documentation platform server, compatible with the GitBook REST API v1.';

/** Folio's version, from package.json ('' when it cannot be read). The CLI prints it too. */
export function version(): string {
  try {
    return JSON.parse(readFileSync(projectPath('package.json'), 'utf8')).version ?? '';
  } catch {
    return '';
  }
}

/** The quality (q) the Accept header gives a media type; 0 when it does not accept it. */
function quality(accept: string, type: string): number {
  let best = 0;
  let bestSpecificity = -1;
  const [major] = type.split('/');
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const specificity = range === type ? 2 : range === `${major}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specificity < 0 || specificity < bestSpecificity) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = q ? Number(q.slice(2)) : 1;
    if (specificity > bestSpecificity || value > best) best = Number.isFinite(value) ? value : 0;
    bestSpecificity = specificity;
  }
  return best;
}

/** HTML only for clients that prefer it to JSON (browsers); API clients and curl get JSON. */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return quality(accept, 'text/html') > quality(accept, 'application/json');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(to: ReturnType<typeof links>, ver: string): string {
  const item = (href: string, label: string, what: string) =>
    `<li><a href="${escapeHtml(href)}">${escapeHtml(label)}</a>: ${escapeHtml(what)}</li>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Folio</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}</style>
</head>
<body>
<h1>Folio${ver ? ` <small>${escapeHtml(ver)}</small>` : ''}</h1>
<p>${escapeHtml(DESCRIPTION)} The official <code>@gitbook/api</code> client works against it: pass this server as its <code>endpoint</code>.</p>
<ul>
${item(to.docs, '/docs', 'API reference')}
${item(to.openapi, '/v1/openapi.json', 'OpenAPI description')}
${item(to.api, '/v1', 'API base (send Authorization: Bearer <token>)')}
${item(to.health, '/healthz', 'liveness check')}
${item(to.readiness, '/readyz', 'readiness check (database reachable)')}
</ul>
</body>
</html>
`;
}

/** `GET /`: what Folio is and where to go, as JSON for API clients and a short page for browsers. */
export async function homeRoutes(app: FastifyInstance, publicUrl: string): Promise<void> {
  const ver = version();
  const to = links(publicUrl);
  const json = { name: 'Folio', version: ver, description: DESCRIPTION, links: to };
  const html = page(to, ver);
  app.get('/', { config: { public: true }, schema: { hide: true } }, async (req, reply) => {
    reply.header('vary', 'Accept');
    if (prefersHtml(req.headers.accept)) return reply.type('text/html; charset=utf-8').send(html);
    return json;
  });
}
