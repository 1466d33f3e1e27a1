import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../platform/context.ts';
import { NotFoundError } from '../platform/errors.ts';
import { bearerToken } from '../platform/auth.ts';
import { pageMarkdown } from '../published-site/published.ts';
import { pageAtPath, readerResults, tableOfContents, type SiteReading, type TocEntry } from '../published-site/reader.ts';
import { publishedSite, siteBase } from '../published-site/routes.ts';
import { siteHostOf } from '../published-site/hosts.ts';
import { visitorWith, type Visitor } from '../published-site/visitor.ts';
import { connectedTools } from './connected.ts';
import { answerMcp, mcpServer, tool, type Tool } from './tools.ts';
import { siteMcpServers } from './store.ts';

/**
 * The MCP server of a published site, at `<site URL>/~gitbook/mcp` (the path GitBook serves it
 * at): what a visitor may read of the site, for an agent. It lets the visitor in by the rules of
 * the site's pages (published-site/visitor.ts): a public or unlisted site for anyone, a
 * share-link site with its key (`?share=` in the URL, or `Authorization: Bearer <key>`), a
 * visitor-auth site with a visitor token signed by the site's key (`?jwt_token=`, or the bearer),
 * whose claims decide what adaptive content shows, as on the pages. An unpublished site has no
 * MCP server. Its tools are the site's own reading functions (published-site/reader.ts): search,
 * a page as markdown, the table of contents; and the tools of the MCP servers connected to the
 * site (connected.ts) whose conditions hold for the visitor.
 */

const SERVER_VERSION = '1.0.0';

/** Where the site's addresses start: its own hostname when the request came through it, else PUBLIC_URL. */
function siteOrigin(services: Services, req: FastifyRequest): string {
  const host = req.headers.host;
  return siteHostOf(req.raw) && host ? `${new URL(services.config.publicUrl).protocol}//${host}` : services.config.publicUrl;
}

/** The site-relative path of a page named by its URL, its path under the site, or its path in the site (`.md` and anchors ignored). */
function sitePath(reading: SiteReading, origin: string, given: string): string {
  let path = given.trim();
  if (/^https?:\/\//i.test(path)) {
    const url = new URL(path);
    if (`${url.protocol}//${url.host}` !== new URL(origin).origin) throw new NotFoundError('Page', 'give the address of a page of this site, or its path');
    path = decodeURIComponent(url.pathname);
  }
  path = path.split('#')[0]!.split('?')[0]!;
  if (path.startsWith(reading.base)) path = path.slice(reading.base.length);
  else if (`${path}/` === reading.base) path = '';
  return path.replace(/^\/+|\/+$/g, '').replace(/\.md$/, '');
}

function tocMarkdown(entries: TocEntry[], url: (path: string) => string, depth = 0): string[] {
  return entries.flatMap((e) => [
    `${'  '.repeat(depth)}- ${e.path !== undefined ? `[${e.title}](${url(e.path)})` : e.url ? `[${e.title}](${e.url})` : e.title}`,
    ...tocMarkdown(e.children, url, depth + 1),
  ]);
}

function siteTools(services: Services, reading: SiteReading, visitor: Visitor, origin: string): Tool[] {
  const url = (path: string) => `${origin}${reading.base}${path}`;
  return [
    tool({
      name: 'search_documentation',
      title: 'Search the documentation',
      description: `Search the pages of "${reading.site.title}" by words or a question. Answers the matching pages, best first, each with its address and the passage that matched; read a page whole with read_page.`,
      input: Type.Object({ query: Type.String({ minLength: 1, maxLength: 512, description: 'Words or a question' }) }, { additionalProperties: false }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async ({ query }) => {
        const results = (await readerResults(services, reading, visitor, query.trim())).map((r) => ({
          title: r.title,
          ...(r.section && r.section !== r.title ? { section: r.section } : {}),
          url: `${origin}${r.url}`,
          snippet: r.body,
        }));
        const text = results.length
          ? results.map((r, i) => `${i + 1}. [${r.title}${r.section ? ` › ${r.section}` : ''}](${r.url})\n   ${r.snippet.replace(/\s+/g, ' ').trim()}`).join('\n')
          : `No page of this site matches "${query}".`;
        return { text, data: { results } };
      },
    }),
    tool({
      name: 'read_page',
      title: 'Read a page',
      description: 'Read one page of the documentation as markdown (with its front matter). Name it by its address (from search_documentation or table_of_contents) or its path in the site; an empty path is the first page.',
      input: Type.Object({ path: Type.String({ maxLength: 2048, description: "The page's address or its path in the site, e.g. getting-started/install" }) }, { additionalProperties: false }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async ({ path }) => {
        const found = await pageAtPath(services, reading, sitePath(reading, origin, path), visitor);
        if (!found) throw new NotFoundError('Page', 'no page of this site you may read is at this address; see table_of_contents');
        const markdown = await pageMarkdown(services.db, found.nav, found.page, visitor);
        return { text: markdown, data: { title: found.page.title, url: url(`${found.located.prefix}${found.page.path}`), markdown } };
      },
    }),
    tool({
      name: 'table_of_contents',
      title: 'Table of contents',
      description: 'List the pages of the documentation as its navigation shows them: each section and variant, then its page tree, with the address of every page.',
      input: Type.Object({}, { additionalProperties: false }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async () => {
        const spaces = await tableOfContents(services, reading, visitor);
        const text = spaces
          .map((s) => [`## ${s.section ? `${s.section} › ` : ''}${s.space}`, '', ...tocMarkdown(s.pages, url)].join('\n'))
          .join('\n\n');
        return { text: `# ${reading.site.title}\n\n${text}`, data: { title: reading.site.title, spaces: spaces.map((s) => ({ ...s, url: url(s.path) })) } };
      },
    }),
  ];
}

/** POST (and the refused GET and DELETE) at `<site>/~gitbook/mcp`. */
export async function answerSiteMcp(
  services: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  address: { orgKey: string; basename: string },
  query: { share?: string | undefined; jwt_token?: string | undefined },
) {
  const { orgKey, basename } = address;
  const published = await publishedSite(services, orgKey, basename);
  if (!published) return reply.code(404).send({ error: { code: 404, message: 'There is no published site at this address' } });
  const { site } = published;
  const bearer = bearerToken(req.headers.authorization);
  const visitor = await visitorWith(services.db, site, { share: query.share || bearer, jwt: query.jwt_token || bearer });
  reply.header('x-robots-tag', 'noindex').header('vary', 'authorization');
  if (!visitor) {
    // As the pages: a share-link site is not revealed; a visitor-auth site asks for a token.
    if (site.visibility === 'visitor-auth') return reply.code(401).send({ error: { code: 401, message: 'This site is for signed-in readers: send the visitor token its backend signs, as ?jwt_token= or "Authorization: Bearer <token>"' } });
    return reply.code(404).send({ error: { code: 404, message: 'There is no published site at this address' } });
  }
  const reading: SiteReading = { site, structure: published.structure, integrations: published.integrations, base: siteBase(req, address) };
  const origin = siteOrigin(services, req);
  const connected = req.method === 'POST' ? connectedTools(services, await siteMcpServers(services.db, services.config, site.organization_id, site.id), visitor, req.log) : undefined;
  return answerMcp(req, reply, () =>
    mcpServer(
      { name: `folio-site-${site.id}`, title: site.title, version: SERVER_VERSION },
      `The documentation of "${site.title}". Use search_documentation to find pages, read_page to read one as markdown, table_of_contents to see how it is organized. Answer from what the pages say and cite their addresses.`,
      siteTools(services, reading, visitor, origin),
      req.log,
      connected,
    ),
  );
}
