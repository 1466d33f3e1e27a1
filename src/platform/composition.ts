import type { FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { FolioApp } from './app.ts';
import type { IntegrationGrant, Services } from './context.ts';
import type { Db } from './db/database.ts';
import type { UserRow } from './db/schema.ts';

/**
 * A kind of bearer token other than the API tokens the platform issues itself (integration
 * tokens): an area plugs it into authentication here instead of the platform importing the area.
 */
export interface TokenKind {
  /** Tokens of this kind start with this prefix. */
  prefix: string;
  /** The user the token acts as and its grant; undefined for an unknown or expired token. */
  authenticate(db: Db, tokenHash: string): Promise<{ user: UserRow; integration?: IntegrationGrant } | undefined>;
  /** Throws when the token may not reach this route (its scopes and targets). */
  assertRoute?(req: FastifyRequest, found: { user: UserRow; integration?: IntegrationGrant }): void;
  /** The 401 message for a token of this kind that is not valid. */
  invalidMessage: string;
}

/** Rewrites the URL of a request that arrives on another hostname (a published site's custom domain). */
export interface HostRewriter {
  rewrite(req: IncomingMessage): string;
  /** Called once the server is ready (load the hostnames, start refreshing them). */
  start(): Promise<void>;
  stop(): void;
}

/**
 * What the server is made of, decided at the top (src/routes.ts): the areas' routes, the token
 * kinds they add, and the rules that restrict scoped tokens. `platform/app.ts` builds the server
 * around it and knows no area.
 */
export interface AppComposition {
  /** Routes outside the API registered before it (sign-in pages). */
  webRoutes(app: FolioApp): Promise<void>;
  /** The API, registered under /v1. */
  apiRoutes(api: FolioApp): Promise<void>;
  /** Routes registered after the API (published sites: they answer what the API does not). */
  lateRoutes(app: FolioApp): Promise<void>;
  tokenKinds: TokenKind[];
  /** Throws when a token scoped to one space (a content token) may not reach this route. */
  assertScopedTokenRoute(req: FastifyRequest, spaceId: string): void;
  hostRewriter?(services: Services): HostRewriter;
}
