import { type Static, type TObject, type TString, Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import type { Ctx } from '../platform/context.ts';
import { contentDisposition } from '../platform/content-disposition.ts';
import { ListOf, PageQuery as ListQuery } from '../platform/paging.ts';
import { sendBlob } from '../platform/downloads.ts';
import { DocumentQuery, File, JsonDocument, Page, PageQuery, ReusableContent, Revision, RevisionQuery } from './schemas.ts';
import { documentById, pageDocument, reusableContentById, reusableContentDocument, type DocumentRead } from './documents.ts';
import {
  currentContent,
  fileById,
  listFiles,
  pageById,
  pageByPath,
  pageReadJson,
  type PageRead,
  presentPages,
  presentRevision,
  revisionContent,
  type ContentTarget,
  type ReadOptions,
} from './service.ts';

/** Answers a page read: a document serialized on a worker thread is sent as the JSON text it is. */
function sendPageRead(reply: FastifyReply, read: PageRead) {
  if (read.documentJson === undefined) return read.page;
  return reply.type('application/json; charset=utf-8').send(pageReadJson({ page: read.page, documentJson: read.documentJson }));
}

/** Every read option of the query strings (a page read takes them all; the others take some). */
type Query = Static<typeof PageQuery>;

function readOptions(query: Query): ReadOptions {
  return {
    metadata: query.metadata !== 'false',
    format: query.format,
    evaluated: query.evaluated === 'true' ? true : query.evaluated === 'deterministic-only' ? 'deterministic-only' : false,
    dereferenced: query.dereferenced === 'true' ? true : query.dereferenced === 'reusable-contents' ? 'reusable-contents' : false,
    computed: query.computed === 'true',
    markdownRefs: query['format.markdown.refs'],
  };
}

/** Answers a document read: JSON text converted on a worker is sent as it is. */
function sendDocument(reply: FastifyReply, read: DocumentRead) {
  if ('document' in read) return read.document;
  return reply.type('application/json; charset=utf-8').send(read.json);
}

export interface ContentReadTarget {
  /** Path prefix after /v1, e.g. /spaces/:spaceId/content */
  prefix: string;
  /** The path parameters of `prefix`, all strings. */
  params: TObject<Record<string, TString>>;
  names: {
    revision: string;
    pages: string;
    page: string;
    path: string;
    files: string;
    file: string;
    reusableContent: string;
    reusableContentDocument: string;
    pageDocument: string;
  };
  /** The content read; `params` holds the route's parameters (`prefix`'s among them). */
  resolve(ctx: Ctx, params: Partial<Record<string, string>>): Promise<ContentTarget>;
}

/** The same reads for the space's current content, a revision, and (registered by src/change-requests/) a change request's head. */
export function readRoutes(app: FolioApp, target: ContentReadTarget) {
  const tags = ['content'];
  const withId = (extra: Record<string, TString>) => Type.Object({ ...target.params.properties, ...extra });
  app.get(
    target.prefix,
    { schema: { operationId: target.names.revision, tags, params: target.params, querystring: RevisionQuery, response: { 200: Revision, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return presentRevision(ctx, await target.resolve(ctx, req.params), readOptions(req.query));
    },
  );
  app.get(
    `${target.prefix}/pages`,
    {
      schema: {
        operationId: target.names.pages,
        tags,
        params: target.params,
        querystring: RevisionQuery,
        response: { 200: Type.Object({ pages: Type.Array(Page) }), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return presentPages(ctx, await target.resolve(ctx, req.params), readOptions(req.query));
    },
  );
  app.get(
    `${target.prefix}/page/:pageId`,
    {
      schema: {
        operationId: target.names.page,
        tags,
        params: withId({ pageId: Type.String({ maxLength: 100 }) }),
        querystring: PageQuery,
        response: { 200: Page, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { params } = req;
      return sendPageRead(reply, await pageById(ctx, await target.resolve(ctx, params), params.pageId!, readOptions(req.query)));
    },
  );
  app.get(
    `${target.prefix}/path/*`,
    {
      schema: {
        operationId: target.names.path,
        tags,
        params: withId({ '*': Type.String({ maxLength: 2000, description: 'Page path (slugs joined by /)' }) }),
        querystring: PageQuery,
        response: { 200: Page, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { params } = req;
      return sendPageRead(reply, await pageByPath(ctx, await target.resolve(ctx, params), params['*']!, readOptions(req.query)));
    },
  );
  app.get(
    `${target.prefix}/files`,
    {
      schema: {
        operationId: target.names.files,
        tags,
        params: target.params,
        querystring: Type.Object({ ...ListQuery, ...RevisionQuery.properties }),
        response: { 200: ListOf(File), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return listFiles(ctx, await target.resolve(ctx, req.params), req.query, readOptions(req.query));
    },
  );
  app.get(
    `${target.prefix}/page/:pageId/document`,
    {
      schema: {
        operationId: target.names.pageDocument,
        tags,
        params: withId({ pageId: Type.String({ maxLength: 100 }) }),
        querystring: DocumentQuery,
        response: { 200: JsonDocument, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { params } = req;
      return sendDocument(reply, await pageDocument(ctx, await target.resolve(ctx, params), params.pageId!, readOptions(req.query)));
    },
  );
  app.get(
    `${target.prefix}/reusable-contents/:reusableContentId`,
    {
      schema: {
        operationId: target.names.reusableContent,
        tags,
        params: withId({ reusableContentId: Type.String({ maxLength: 100 }) }),
        querystring: RevisionQuery,
        response: { 200: ReusableContent, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { params } = req;
      return reusableContentById(ctx, await target.resolve(ctx, params), params.reusableContentId!, readOptions(req.query));
    },
  );
  app.get(
    `${target.prefix}/reusable-contents/:reusableContentId/document`,
    {
      schema: {
        operationId: target.names.reusableContentDocument,
        tags,
        params: withId({ reusableContentId: Type.String({ maxLength: 100 }) }),
        querystring: DocumentQuery,
        response: { 200: JsonDocument, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { params } = req;
      const read = await reusableContentDocument(ctx, await target.resolve(ctx, params), params.reusableContentId!, readOptions(req.query));
      return sendDocument(reply, read);
    },
  );
  app.get(
    `${target.prefix}/files/:fileId`,
    {
      schema: {
        operationId: target.names.file,
        tags,
        params: withId({ fileId: Type.String({ maxLength: 100 }) }),
        querystring: RevisionQuery,
        response: { 200: File, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { params } = req;
      return fileById(ctx, await target.resolve(ctx, params), params.fileId!, readOptions(req.query));
    },
  );
}

export async function contentRoutes(app: FolioApp): Promise<void> {
  const spaceParams = Type.Object({ spaceId: Type.String({ maxLength: 100 }) });
  readRoutes(app, {
    prefix: '/spaces/:spaceId/content',
    params: spaceParams,
    names: {
      revision: 'getCurrentRevision',
      pages: 'listPages',
      page: 'getPageById',
      path: 'getPageByPath',
      files: 'listFiles',
      file: 'getFileById',
      reusableContent: 'getReusableContentById',
      reusableContentDocument: 'getReusableContentDocumentById',
      pageDocument: 'getPageDocumentById',
    },
    resolve: (ctx, p) => currentContent(ctx, p.spaceId!),
  });
  readRoutes(app, {
    prefix: '/spaces/:spaceId/revisions/:revisionId',
    params: Type.Object({ spaceId: Type.String({ maxLength: 100 }), revisionId: Type.String({ maxLength: 100 }) }),
    names: {
      revision: 'getRevisionById',
      pages: 'listPagesInRevisionById',
      page: 'getPageInRevisionById',
      path: 'getPageInRevisionByPath',
      files: 'listFilesInRevisionById',
      file: 'getFileInRevisionById',
      reusableContent: 'getReusableContentInRevisionById',
      reusableContentDocument: 'getReusableContentDocumentInRevisionById',
      pageDocument: 'getPageDocumentInRevisionById',
    },
    resolve: (ctx, p) => revisionContent(ctx, p.spaceId!, p.revisionId!),
  });

  app.get(
    '/spaces/:spaceId/documents/:documentId',
    {
      schema: {
        operationId: 'getDocumentById',
        tags: ['content'],
        params: Type.Object({ spaceId: Type.String({ maxLength: 100 }), documentId: Type.String({ maxLength: 100 }) }),
        response: { 200: JsonDocument, ...errorResponses },
      },
    },
    async (req, reply) => sendDocument(reply, await documentById(req.ctx(), req.params.spaceId, req.params.documentId)),
  );
  // File bytes. The address is the hash of the content: knowing it is the capability to read it.
  app.get(
    '/blobs/:hash/:name',
    {
      config: { public: true },
      schema: { hide: true, params: Type.Object({ hash: Type.String({ maxLength: 100 }), name: Type.String({ maxLength: 300 }) }) },
    },
    async (req, reply) => {
      return sendBlob(reply, req.server.services.blobs, req.params.hash, {
        contentType: contentTypeOf(req.params.name),
        disposition: contentDisposition('inline', req.params.name),
        headers: { 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
      });
    },
  );
}

const TYPES: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', pdf: 'application/pdf',
  txt: 'text/plain; charset=utf-8', md: 'text/markdown; charset=utf-8', json: 'application/json', csv: 'text/csv; charset=utf-8',
};

/** Served types come from a short allow-list (never HTML or SVG, which could run script in a browser). */
function contentTypeOf(name: string): string {
  return TYPES[name.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';
}
