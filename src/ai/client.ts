import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Config } from '../platform/config.ts';
import { pinnedLookup, readBody, vettedAddresses } from '../content/files.ts';

/**
 * The client of the OpenAI-compatible API every AI feature uses (Ask, conversation insights):
 * `AI_ENGINE_URL` (or `INSIGHTS_ENGINE_URL`), its key, chat and embedding models. Outbound calls go
 * through the same address checks as file fetches (FETCH_ALLOW_PRIVATE, FETCH_ALLOW_CIDRS), to the
 * addresses vetted (the connection is pinned to them), within FETCH_TIMEOUT_MS.
 */

export type EngineConfig = Pick<
  Config,
  'aiEngineUrl' | 'aiEngineKey' | 'aiModel' | 'aiEmbeddingModel' | 'fetchAllowPrivate' | 'fetchAllowCidrs' | 'fetchTimeoutMs' | 'fetchMaxRequestBytes'
>;

export class EngineError extends Error {}

/** Responses larger than this are refused (an engine answers with a few KB of JSON, or a stream of tokens). */
const MAX_RESPONSE = 10 * 1024 * 1024;

/** Opens a POST of JSON to the engine at a vetted address; the caller reads the response. */
async function open(config: EngineConfig, path: string, body: unknown, accept: string, signal: AbortSignal): Promise<IncomingMessage> {
  const url = new URL(`${config.aiEngineUrl}${path}`);
  let addresses;
  try {
    addresses = await vettedAddresses(url, config, signal);
  } catch (err) {
    throw new EngineError(
      `AI_ENGINE_URL: ${url.hostname} cannot be reached under the outbound address rules (set FETCH_ALLOW_PRIVATE=true or FETCH_ALLOW_CIDRS for a private engine): ${(err as Error).message}`,
    );
  }
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        signal,
        agent: false,
        lookup: pinnedLookup(addresses),
        headers: {
          'content-type': 'application/json',
          'content-length': String(payload.byteLength),
          accept,
          'user-agent': 'Folio',
          ...(config.aiEngineKey ? { authorization: `Bearer ${config.aiEngineKey}` } : {}),
        },
      },
      resolve,
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function refuseFailure(res: IncomingMessage, path: string): Promise<void> {
  if ((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300) return;
  const text = (await readBody(res, 64 * 1024, () => new EngineError(`${path} answered ${res.statusCode}`))).toString('utf8');
  throw new EngineError(`${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
}

/** POSTs JSON to the engine and reads its JSON answer, within FETCH_TIMEOUT_MS, to vetted addresses only. */
export async function postJson(config: EngineConfig, path: string, body: unknown): Promise<any> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('deadline')), config.fetchTimeoutMs);
  try {
    const res = await open(config, path, body, 'application/json', controller.signal);
    await refuseFailure(res, path);
    const text = (await readBody(res, MAX_RESPONSE, () => new EngineError(`${path}: response larger than ${MAX_RESPONSE} bytes`))).toString('utf8');
    try {
      return JSON.parse(text);
    } catch {
      throw new EngineError(`${path} answered something that is not JSON: ${text.slice(0, 200)}`);
    }
  } catch (err) {
    if (controller.signal.aborted) throw new EngineError(`${path} did not answer within ${config.fetchTimeoutMs} ms (FETCH_TIMEOUT_MS)`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * A chat completion streamed (`stream: true`): yields the text of each delta as the engine sends
 * it. An engine that ignores `stream` and answers with one JSON completion is read as one delta.
 * FETCH_TIMEOUT_MS bounds the wait between two chunks, not the whole answer; `signal` (the
 * caller went away) stops it.
 */
export async function* streamChat(config: EngineConfig, messages: ChatMessage[], opts: { signal?: AbortSignal; maxTokens?: number } = {}): AsyncGenerator<string> {
  const path = '/chat/completions';
  const controller = new AbortController();
  const onAbort = () => controller.abort(new Error('caller left'));
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  let timer = setTimeout(() => controller.abort(new Error('deadline')), config.fetchTimeoutMs);
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error('deadline')), config.fetchTimeoutMs);
  };
  try {
    const res = await open(config, path, { model: config.aiModel, temperature: 0, stream: true, messages, ...(opts.maxTokens ? { max_tokens: opts.maxTokens } : {}) }, 'text/event-stream, application/json', controller.signal);
    await refuseFailure(res, path);
    const type = String(res.headers['content-type'] ?? '');
    if (!type.includes('text/event-stream')) {
      const text = (await readBody(res, MAX_RESPONSE, () => new EngineError(`${path}: response larger than ${MAX_RESPONSE} bytes`))).toString('utf8');
      let parsed: any;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new EngineError(`${path} answered something that is neither a stream nor JSON: ${text.slice(0, 200)}`);
      }
      const content = parsed?.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new EngineError(`${path}: the chat answer has no message content`);
      yield content;
      return;
    }
    res.setEncoding('utf8');
    let buffered = '';
    let received = 0;
    for await (const chunk of res as AsyncIterable<string>) {
      rearm();
      received += chunk.length;
      if (received > MAX_RESPONSE) throw new EngineError(`${path}: response larger than ${MAX_RESPONSE} bytes`);
      buffered += chunk;
      // Server-sent events: `data: {json}` lines, events separated by a blank line, `data: [DONE]` at the end.
      let end: number;
      while ((end = buffered.search(/\r?\n\r?\n/)) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end).replace(/^\r?\n\r?\n/, '');
        const data = event
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, ''))
          .join('\n');
        if (!data) continue;
        if (data === '[DONE]') return;
        let parsed: any;
        try {
          parsed = JSON.parse(data);
        } catch {
          throw new EngineError(`${path}: a streamed event is not JSON: ${data.slice(0, 200)}`);
        }
        if (parsed?.error) throw new EngineError(`${path}: ${String(parsed.error.message ?? parsed.error).slice(0, 300)}`);
        const delta = parsed?.choices?.[0]?.delta?.content;
        if (typeof delta === 'string' && delta) yield delta;
      }
    }
  } catch (err) {
    if (controller.signal.aborted && !opts.signal?.aborted) throw new EngineError(`${path} stopped answering for ${config.fetchTimeoutMs} ms (FETCH_TIMEOUT_MS)`);
    throw err;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    controller.abort();
  }
}

/** Texts sent per `/embeddings` request: engines cap their batches (OpenAI at 2,048 inputs). */
export const EMBEDDING_BATCH = 64;

/**
 * Vectors of `texts` from `POST {AI_ENGINE_URL}/embeddings` with AI_EMBEDDING_MODEL, in the order
 * of the texts, in requests of EMBEDDING_BATCH texts (each within FETCH_TIMEOUT_MS). Every vector
 * must be an array of finite numbers of the same length.
 */
export async function embedTexts(config: EngineConfig, texts: string[]): Promise<number[][]> {
  const model = config.aiEmbeddingModel;
  if (!model) throw new EngineError('AI_EMBEDDING_MODEL is not set');
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += EMBEDDING_BATCH) {
    const batch = texts.slice(i, i + EMBEDDING_BATCH);
    const answer = await postJson(config, '/embeddings', { model, input: batch });
    const data = answer?.data;
    if (!Array.isArray(data) || data.length !== batch.length) throw new EngineError(`/embeddings: expected ${batch.length} vectors, got ${Array.isArray(data) ? data.length : 'none'}`);
    const sorted = [...data].sort((a, b) => (a?.index ?? 0) - (b?.index ?? 0));
    for (const d of sorted) {
      if (!Array.isArray(d?.embedding) || !d.embedding.length || !d.embedding.every((x: unknown) => typeof x === 'number' && Number.isFinite(x))) {
        throw new EngineError('/embeddings: a vector is not a non-empty array of numbers');
      }
      if (out.length && out[0]!.length !== d.embedding.length) throw new EngineError(`/embeddings: vectors of ${out[0]!.length} and ${d.embedding.length} numbers in one answer`);
      out.push(d.embedding as number[]);
    }
  }
  return out;
}
