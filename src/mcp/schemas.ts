import { Type, type Static } from '@sinclair/typebox';
import { asEnum } from '../platform/schemas.ts';
import { Expression } from '../sites/schemas.ts';

/** The MCP servers connected to a site (the official `SiteMcpServer` operations). */

export const SiteMcpServerIdParams = Type.Object({
  organizationId: Type.String({ maxLength: 100 }),
  siteId: Type.String({ maxLength: 100 }),
  siteMcpServerId: Type.String({ maxLength: 100 }),
});

const Name = Type.String({ minLength: 1, maxLength: 100, description: 'Name of the MCP server' });
const Url = Type.String({ format: 'uri', maxLength: 2048, description: 'Address of the MCP server (http or https)' });
const transport = (options: { default?: string } = {}) =>
  asEnum(Type.Union([Type.Literal('sse'), Type.Literal('http')]), {
    description: 'Transport protocol used to connect to the MCP server: http (Streamable HTTP) or sse (the older HTTP+SSE transport)',
    ...options,
  });
/** As the official schema: `sse` when a new server names none. */
export const Transport = transport({ default: 'sse' });
export const Headers = Type.Record(Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$" }), Type.String({ minLength: 1, maxLength: 512, pattern: '^[\\t\\x20-\\x7e\\x80-\\xff]*$', description: 'A header value: tabs and printable characters (as HTTP allows)' }), {
  maxProperties: 50,
  description: 'HTTP headers sent with requests to this server (its credentials, for example)',
});
const Condition = Type.Union([Expression, Type.Null()], {
  description: 'Adaptive-content expression deciding whether the server is offered to a visitor; null removes it',
});

export const SiteMcpServer = Type.Object({
  object: Type.Literal('site-mcp-server'),
  id: Type.String({ description: 'Unique identifier for the MCP server' }),
  name: Name,
  url: Url,
  transport: Transport,
  headers: Headers,
  condition: Type.Optional({ ...Expression, description: 'Expression deciding whether the server is offered to a visitor' }),
  urls: Type.Object({ location: Type.String({ format: 'uri', description: 'URL of the MCP server in the API' }) }),
});

export const CreateSiteMcpServerBody = Type.Object({
  name: Name,
  url: Url,
  transport: Type.Optional(Transport),
  headers: Headers,
  condition: Type.Optional(Condition),
});
export type CreateSiteMcpServerInput = Static<typeof CreateSiteMcpServerBody>;

export const UpdateSiteMcpServerBody = Type.Object({
  name: Type.Optional(Name),
  url: Type.Optional(Url),
  // No default here: a change that does not name the transport keeps it.
  transport: Type.Optional(transport()),
  headers: Type.Optional(Headers),
  condition: Type.Optional(Condition),
});
export type UpdateSiteMcpServerInput = Static<typeof UpdateSiteMcpServerBody>;
