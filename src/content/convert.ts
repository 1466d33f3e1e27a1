import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { BadRequestError } from '../platform/errors.ts';
import { projectUrl } from '../platform/project-files.ts';
import { runConversion, type ConvertTask } from './convert-worker.ts';
import { checkDocumentInput, checkMarkdownLimits } from '../platform/document-limits.ts';
import type { GitBookDocument } from './markdown/markdown.ts';

/**
 * The one door through which request handlers convert content. Small inputs convert in this
 * thread (a worker round trip would cost more than the work); large ones go to a pool of worker
 * threads, so a 2 MB page being read, written or merged never stalls the other requests this
 * process is serving. Every input is checked against `limits.ts` before a parser sees it.
 */

/** Inputs up to this many characters convert in the calling thread (well under 10 ms of work). */
const INLINE_CHARS = 16 * 1024;

let pool: Piscina | undefined;

function workers(): Piscina {
  if (!pool) {
    pool = new Piscina({
      filename: projectUrl('src/content/convert-worker-entry.mjs'),
      // One thread is left for the event loop and the database driver.
      maxThreads: Math.max(1, availableParallelism() - 1),
      minThreads: 0,
      idleTimeout: 30_000,
    });
    // A worker that fails to start rejects the conversions it was given (a 500 for that request);
    // without a listener the pool's 'error' event would end the whole process.
    pool.on('error', (err: unknown) => console.error('conversion worker failed', err));
  }
  return pool;
}

/** Stops the worker threads (at shutdown; the next conversion starts them again). */
export async function closeConversions(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.destroy();
}

async function convert<T>(task: ConvertTask, size: number): Promise<T> {
  if (size <= INLINE_CHARS) return runConversion(task) as T;
  return (await workers().run(task)) as T;
}

/** A measure of a document's size that costs one pass (its JSON text would cost a copy). */
function documentSize(doc: unknown): number {
  let size = 0;
  const stack: unknown[] = [doc];
  while (stack.length && size <= INLINE_CHARS) {
    const value = stack.pop();
    if (typeof value === 'string') size += value.length;
    else if (Array.isArray(value)) {
      size += value.length;
      for (const item of value) stack.push(item);
    } else if (value && typeof value === 'object') {
      for (const v of Object.values(value)) stack.push(v);
    }
  }
  return size;
}

/**
 * A client's rich-text document as markdown: its shape and size are checked first (400 naming the
 * node), then it is written out.
 */
export async function documentInputToMarkdown(doc: unknown, field: string): Promise<string> {
  checkDocumentInput(doc, field);
  try {
    const markdown = await convert<string>({ kind: 'toMarkdown', document: doc as GitBookDocument }, documentSize(doc));
    checkMarkdownLimits(markdown, field);
    return markdown;
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    // The writer trusts node shapes (an image's `data.ref`, a table's definitions…).
    throw new BadRequestError(`${field}: the document cannot be read (${(err as Error).message}); check the shape of its nodes`);
  }
}

/**
 * A client's document as Folio stores and serves it: read, then written back in canonical form,
 * so every stored rich text is a document the official schema accepts.
 */
export async function normalizeDocumentInput(doc: unknown, field: string): Promise<GitBookDocument> {
  return markdownToDocumentForRead(await documentInputToMarkdown(doc, field));
}

/**
 * The JSON document of stored markdown (reads never fail: see convert-worker.ts). `keySeed` gives
 * block keys derived from a seed (computed content) instead of from positions alone.
 */
export async function markdownToDocumentForRead(markdown: string, opts: { keySeed?: string } = {}): Promise<GitBookDocument> {
  return convert({ kind: 'toDocument', markdown, keySeed: opts.keySeed }, markdown.length);
}

/**
 * The JSON document of stored markdown as JSON text, for reads of large pages: conversion and
 * serialization both happen on a worker thread, so the event loop only copies the text.
 */
export async function markdownToDocumentJsonForRead(markdown: string): Promise<string> {
  const key = createHash('sha256').update(markdown).digest('base64url');
  const cached = largeReads.get(key);
  if (cached !== undefined) return cached;
  const json = await convert<string>({ kind: 'toDocumentJson', markdown }, markdown.length);
  largeReads.set(key, json);
  return json;
}

/**
 * The JSON text of recently read large documents, by the hash of their markdown: stored bodies
 * never change under a hash, so an entry is never stale. A page open in many browsers, or read
 * again after each save of another page, converts once. Bounded by the characters it holds.
 */
class JsonCache {
  private readonly entries = new Map<string, string>();
  private size = 0;
  constructor(private readonly maxChars: number) {}

  get(key: string): string | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // Most recently used last.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: string): void {
    if (value.length > this.maxChars / 4 || this.entries.has(key)) return;
    this.entries.set(key, value);
    this.size += value.length;
    for (const [oldest, text] of this.entries) {
      if (this.size <= this.maxChars) break;
      this.entries.delete(oldest);
      this.size -= text.length;
    }
  }
}

const largeReads = new JsonCache(64 * 1024 * 1024);

/** Whether a read of this markdown is worth serializing off the event loop. */
export const isLargeMarkdown = (markdown: string) => markdown.length > INLINE_CHARS;

/** The same for short texts (comments, at most 100,000 characters) whose presenters are synchronous. */
export function shortMarkdownToDocument(markdown: string): GitBookDocument {
  return runConversion({ kind: 'toDocument', markdown }) as GitBookDocument;
}

/** Headings with their text, and the whole visible text, for the search index. */
export async function searchTextOf(markdown: string): Promise<{ sections: { id: string; title: string; body: string }[]; body: string }> {
  return convert({ kind: 'searchText', markdown }, markdown.length);
}

/** Link and image URLs of a page and the anchors of its headings, for link checking. */
export async function linkTargetsOf(markdown: string): Promise<{ urls: string[]; anchors: string[] }> {
  return convert({ kind: 'linkTargets', markdown }, markdown.length);
}
