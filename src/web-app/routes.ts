import { readFile } from 'node:fs/promises';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import { projectPath } from '../platform/project-files.ts';

const DIST = `${projectPath('app/dist')}/`;

/**
 * The app's pages allow only the app's own files: no inline script or style (React and the editor
 * set styles through the DOM, which the policy does not cover), no plugin, no framing of the app.
 * Images and embeds of page content may come from anywhere on https, as a page's author linked them.
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self' https:",
  "media-src 'self' https: blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function sendShell(reply: FastifyReply, html: string) {
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', APP_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-cache')
    .send(html);
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Folio</title></head><body>
<h1>The app is not built</h1><p>Run <code>npm run build:app</code> (or start the server with <code>npm start</code>, which builds it) and reload.</p></body></html>`;

/**
 * The app at /app: its built files under /app/assets (content-hashed names, cached for a year,
 * served precompressed when the build wrote .br/.gz beside them), and its one HTML page for every
 * other /app path, where the app's router takes over. /app/api/* are the app's JSON routes
 * (src/sign-in/); an unknown one is a JSON 404, not the page.
 */
export async function webAppRoutes(app: FolioApp): Promise<void> {
  // Read at each visit (a few hundred bytes): a rebuild while the server runs (npm run build:app)
  // names new hashed files, and the page must name the files that exist.
  const shell = async () => readFile(`${DIST}index.html`, 'utf8').catch(() => undefined);

  await app.register(async (assets: FastifyInstance) => {
    // The files are public: nothing in them is anyone's data.
    assets.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), public: true } as typeof route.config;
      route.schema = { ...(route.schema ?? {}), hide: true };
    });
    // Registered whether or not the app is built yet: a build after the start is served.
    await assets.register(fastifyStatic, {
      root: `${DIST}assets`,
      prefix: '/app/assets/',
      decorateReply: false,
      preCompressed: true,
      immutable: true,
      maxAge: '365d',
      index: false,
    });
    const page = async (_req: unknown, reply: FastifyReply) => {
      const html = await shell();
      return html ? sendShell(reply, html) : reply.status(503).header('content-type', 'text/html; charset=utf-8').send(NOT_BUILT);
    };
    assets.get('/app', page);
    assets.get('/app/*', async (req, reply) => {
      const path = req.url.split('?')[0]!;
      if (path.startsWith('/app/api/') || path.startsWith('/app/assets/')) {
        return reply.status(404).send({ error: { code: 404, message: `No route ${req.method} ${path}` } });
      }
      return page(req, reply);
    });
  });
}
