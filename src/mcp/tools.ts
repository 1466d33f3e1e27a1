import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HttpError } from '../platform/errors.ts';

/**
 * Folio's MCP servers over the maintained SDK (`@modelcontextprotocol/sdk`): tools declared with
 * TypeBox input schemas (JSON Schema, as every route's), checked before they run, and served by
 * the SDK's Streamable HTTP transport in stateless mode inside a Fastify route: each POST gets a
 * fresh server and transport for the caller it authenticated, answers in JSON (no session, no
 * stream to keep open), and is closed after it. The SDK's low-level `Server` is used rather than
 * `McpServer` because the latter takes zod schemas, a second schema library next to TypeBox.
 */

export interface Tool<S extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  /** Hints for clients: a read-only tool changes nothing; a destructive one may lose work. */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  run(args: Static<S>): Promise<ToolOutput>;
}

/** What a tool answers: text (markdown) for the model, and the same as data when it has a shape. */
export interface ToolOutput {
  text: string;
  data?: Record<string, unknown>;
}

/** A tool of another MCP server offered through this one (a site's connected servers). */
export interface ForwardedTools {
  list(): Promise<{ name: string; title?: string | undefined; description?: string | undefined; inputSchema: { type: 'object'; [k: string]: unknown }; annotations?: Record<string, unknown> | undefined }[]>;
  /** Undefined when the name is not one of these tools. */
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult> | undefined;
}

export function tool<S extends TObject>(t: Tool<S>): Tool {
  return t as unknown as Tool;
}

const failed = (message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: message }] });

/** An MCP server offering `tools` (and `forwarded`, listed after them). */
export function mcpServer(
  info: { name: string; title: string; version: string },
  instructions: string,
  tools: Tool[],
  log: FastifyRequest['log'],
  forwarded?: ForwardedTools,
): Server {
  const server = new Server(info, { capabilities: { tools: {} }, instructions });
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      ...tools.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.input as unknown as { type: 'object' }, ...(t.annotations ? { annotations: t.annotations } : {}) })),
      ...(forwarded ? await forwarded.list() : []),
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    const found = byName.get(name);
    if (!found) {
      const elsewhere = forwarded?.call(name, args);
      if (elsewhere) return elsewhere;
      return failed(`Unknown tool "${name}": call tools/list for the tools of this server`);
    }
    if (!Value.Check(found.input, args)) {
      const first = Value.Errors(found.input, args).First();
      return failed(`Invalid arguments for ${name}: ${first ? `${first.path || '(arguments)'} ${first.message}` : 'they do not match the input schema'}`);
    }
    try {
      const output = await found.run(args as never);
      return { content: [{ type: 'text', text: output.text }], ...(output.data ? { structuredContent: output.data } : {}) };
    } catch (err) {
      // Refusals (not found, not allowed, bad input) are told to the model as the API tells them.
      if (err instanceof HttpError) return failed(err.message);
      log.error({ err, tool: name }, 'MCP tool failed');
      return failed('The tool failed on the server; try again later');
    }
  });
  return server;
}

const SKIPPED_HEADERS = new Set(['content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade']);

/**
 * Answers one MCP request with `server`: POST carries JSON-RPC messages; GET (a stream for
 * server-initiated messages) and DELETE (ending a session) have no use without sessions, so they
 * are refused with 405 as the transport specification allows.
 */
export async function answerMcp(req: FastifyRequest, reply: FastifyReply, server: () => Server) {
  if (req.method !== 'POST') {
    return reply
      .code(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless, send JSON-RPC messages with POST' }, id: null });
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || SKIPPED_HEADERS.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const mcp = server();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await mcp.connect(transport);
    const response = await transport.handleRequest(new Request(`http://folio.invalid${req.url}`, { method: 'POST', headers }), { parsedBody: req.body });
    reply.code(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    reply.header('cache-control', 'no-store');
    return reply.send(await response.text());
  } finally {
    await mcp.close();
  }
}
