import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Services } from '../platform/context.ts';
import type { McpServer } from './store.ts';
import { pinnedLookup, vettedAddresses, type FetchConfig } from '../content/files.ts';
import { conditionHolds } from '../published-site/conditions.ts';
import type { Visitor } from '../published-site/visitor.ts';
import type { ForwardedTools } from './tools.ts';

/**
 * The MCP servers connected to a site (the `SiteMcpServer` settings), offered through the site's
 * own MCP server: each server whose condition holds for the visitor (the adaptive-content
 * conditions of the site's pages, over the visitor's claims) adds its tools, named
 * `<server name>__<tool>`, and a call is forwarded to it by Folio with the server's headers, which
 * the visitor never sees. Folio is the MCP client here (the SDK's Client over Streamable HTTP or
 * the older HTTP+SSE transport), reaching the server only at addresses FETCH_ALLOW_PRIVATE and
 * FETCH_ALLOW_CIDRS allow (as every outbound call), within FETCH_TIMEOUT_MS and a bounded body.
 * A server that fails is left out of the list, and a call to it answers an error result.
 */

/** A connected server's tool list is kept this long (per server and its last change). */
const LIST_TTL_MS = 60_000;
/** At most this much of an answer is read from a connected server. */
const MAX_ANSWER_BYTES = 5 * 1024 * 1024;
/** Separates a connected server's name from its tool's name. */
const SEPARATOR = '__';

type Listed = Awaited<ReturnType<ForwardedTools['list']>>[number];
const lists = new Map<string, { at: number; tools: Listed[] }>();

/** An MCP tool name for a server's name: letters, digits, '_' and '-'. */
function prefixOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40) || 'server';
}

/** Bytes of a response, cut past `limit`. */
async function* bounded(res: AsyncIterable<Buffer>, limit: number) {
  let size = 0;
  for await (const chunk of res) {
    size += chunk.byteLength;
    if (size > limit) throw new Error(`the MCP server answered more than ${limit} bytes`);
    yield chunk;
  }
}

/**
 * `fetch` for the SDK's client transports through Folio's outbound rules: each connection goes to
 * an address vetted for it (private ones refused unless allowed), redirects are not followed, the
 * body is bounded, and everything stops at the deadline.
 */
export function vettedFetch(config: FetchConfig): FetchLike {
  return async (input, init) => {
    const url = new URL(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${url.protocol} is not http or https`);
    const deadline = AbortSignal.timeout(config.fetchTimeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const addresses = await vettedAddresses(url, config, signal, 'MCP server: ');
    const method = init?.method ?? 'GET';
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const body = init?.body == null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
        url,
        { method, headers: { 'accept-encoding': 'identity', ...headers }, agent: false, lookup: pinnedLookup(addresses), signal },
        (res) => {
          const status = res.statusCode && res.statusCode >= 200 && res.statusCode <= 599 ? res.statusCode : 502;
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers)) for (const v of [value ?? []].flat()) answer.append(name, v);
          const empty = method === 'HEAD' || status === 204 || status === 205 || status === 304;
          if (empty) res.resume();
          const stream = empty ? null : (Readable.toWeb(Readable.from(bounded(res, MAX_ANSWER_BYTES))) as ReadableStream<Uint8Array>);
          resolve(new Response(stream, { status, headers: answer }));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  };
}

function transportFor(config: FetchConfig, server: McpServer): Transport {
  const options = { fetch: vettedFetch(config), requestInit: { headers: server.headers } };
  return server.transport === 'sse' ? new SSEClientTransport(new URL(server.url), options) : new StreamableHTTPClientTransport(new URL(server.url), options);
}

/** Runs `work` with a client connected to `server`, then disconnects. */
async function withClient<T>(config: FetchConfig, server: McpServer, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'folio', version: '1.0.0' });
  const transport = transportFor(config, server);
  try {
    await client.connect(transport, { timeout: config.fetchTimeoutMs });
    return await work(client);
  } finally {
    // Also after a failed connection: an SSE transport left open would reconnect for ever.
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }
}

/** The tools of the servers connected to a site that this visitor is offered; undefined when none. */
export function connectedTools(services: Services, servers: McpServer[], visitor: Visitor, log: FastifyRequest['log']): ForwardedTools | undefined {
  const offered = servers.filter((s) => conditionHolds(s.condition, { visitor: { claims: visitor.claims } }));
  if (!offered.length) return undefined;
  const config = services.config;
  // Unique prefixes, in the servers' order.
  const byPrefix = new Map<string, McpServer>();
  for (const server of offered) {
    let prefix = prefixOf(server.name);
    for (let n = 2; byPrefix.has(prefix); n++) prefix = `${prefixOf(server.name)}_${n}`;
    byPrefix.set(prefix, server);
  }
  const toolsOf = async (prefix: string, server: McpServer): Promise<Listed[]> => {
    const key = `${server.id}:${server.updated_at?.getTime() ?? server.created_at.getTime()}`;
    const hit = lists.get(key);
    if (hit && Date.now() - hit.at < LIST_TTL_MS) return hit.tools.map((t) => ({ ...t, name: `${prefix}${SEPARATOR}${t.name}` }));
    try {
      const tools = await withClient(config, server, async (client) => (await client.listTools(undefined, { timeout: config.fetchTimeoutMs })).tools);
      const listed = tools.map((t) => ({
        name: t.name,
        ...(t.title ? { title: t.title } : {}),
        description: `${t.description ?? ''}${t.description ? '\n\n' : ''}(From ${server.name}, a service this documentation connects to.)`,
        inputSchema: t.inputSchema,
        ...(t.annotations ? { annotations: t.annotations } : {}),
      }));
      lists.set(key, { at: Date.now(), tools: listed });
      if (lists.size > 1000) lists.delete(lists.keys().next().value!);
      return listed.map((t) => ({ ...t, name: `${prefix}${SEPARATOR}${t.name}` }));
    } catch (err) {
      log.warn({ err, mcpServer: server.id }, 'connected MCP server unreachable: its tools are left out');
      return [];
    }
  };
  return {
    list: async () => (await Promise.all([...byPrefix].map(([prefix, server]) => toolsOf(prefix, server)))).flat(),
    call: (name, args) => {
      const at = name.indexOf(SEPARATOR);
      const server = at > 0 ? byPrefix.get(name.slice(0, at)) : undefined;
      if (!server) return undefined;
      const tool = name.slice(at + SEPARATOR.length);
      return withClient(config, server, async (client) => (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: config.fetchTimeoutMs })) as CallToolResult).catch(
        (err: unknown): CallToolResult => {
          log.warn({ err, mcpServer: server.id, tool }, 'connected MCP server call failed');
          return { isError: true, content: [{ type: 'text', text: `${server.name} did not answer: ${err instanceof Error ? err.message : String(err)}` }] };
        },
      );
    },
  };
}
