import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Config } from '../platform/config.ts';
import { pinnedLookup, vettedAddresses } from '../content/files.ts';

/**
 * Translation engines, chosen by configuration (TRANSLATION_ENGINE):
 * - `libretranslate`: a LibreTranslate-compatible HTTP API (`POST {url}/translate` with `q` as an
 *   array of texts, `format: "text"`), which has no notion of instructions;
 * - `openai`: an OpenAI-compatible chat-completions API (`POST {url}/chat/completions`): hosted
 *   services and local servers (llama.cpp, vLLM, Ollama) alike. The texts go as a JSON array and the
 *   model answers with a JSON array of the same length; the translation's instructions are passed
 *   in the system message.
 * Both are called in batches, with a timeout per request and retries with exponential backoff on
 * 429 and 5xx answers and on network errors. Connections go through the same address checks as
 * file fetches (FETCH_ALLOW_PRIVATE, FETCH_ALLOW_CIDRS): a private or loopback engine needs them.
 */

export interface TranslateRequest {
  source: string;
  target: string;
  /** Guidance for engines that take it (plain text of the translation's instructions). */
  instructions?: string | undefined;
}

export interface Engine {
  readonly name: string;
  /** Translates texts (same length and order); texts may hold ⟦n⟧ placeholders to keep as they are. */
  translate(texts: string[], request: TranslateRequest): Promise<string[]>;
}

/** A failure that says what went wrong in words, for the translation's `error`. */
export class EngineError extends Error {}

export interface EngineOptions {
  /** Most texts in one request. */
  batchSize?: number;
  /** Most characters in one request. */
  batchChars?: number;
  /** Attempts per batch (first try included). */
  attempts?: number;
  /** Delay before retry n (1-based). */
  backoffMs?: (retry: number) => number;
}

const LANGUAGE_NAMES: Record<string, string> = {
  en: 'English', fr: 'French', de: 'German', es: 'Spanish', it: 'Italian', pt: 'Portuguese', 'pt-br': 'Brazilian Portuguese',
  ru: 'Russian', ja: 'Japanese', zh: 'Simplified Chinese', 'zh-tw': 'Traditional Chinese', yue: 'Cantonese', ko: 'Korean',
  ar: 'Arabic', hi: 'Hindi', nl: 'Dutch', pl: 'Polish', tr: 'Turkish', sv: 'Swedish', no: 'Norwegian', da: 'Danish',
  fi: 'Finnish', el: 'Greek', cs: 'Czech', hu: 'Hungarian', ro: 'Romanian', th: 'Thai', vi: 'Vietnamese', id: 'Indonesian',
  ms: 'Malay', he: 'Hebrew', uk: 'Ukrainian', sk: 'Slovak', bg: 'Bulgarian', hr: 'Croatian', lt: 'Lithuanian', lv: 'Latvian',
  et: 'Estonian', sl: 'Slovenian',
};

/** LibreTranslate's codes where they differ from the official translation languages. */
const LIBRETRANSLATE_CODES: Record<string, string> = { 'pt-br': 'pb', 'zh-tw': 'zt', no: 'nb', zh: 'zh' };

/** The engine the configuration names; an EngineError saying what to set when none is usable. */
export function engineFromConfig(config: Config, options: EngineOptions = {}): Engine {
  if (!config.translationEngine) {
    throw new EngineError('No translation engine is configured: set TRANSLATION_ENGINE (libretranslate or openai) and TRANSLATION_ENGINE_URL');
  }
  if (!config.translationEngineUrl) throw new EngineError(`TRANSLATION_ENGINE is ${config.translationEngine} but TRANSLATION_ENGINE_URL is not set`);
  const http = new EngineHttp(config, options);
  const base = config.translationEngineUrl;
  const key = config.translationEngineKey;
  if (config.translationEngine === 'libretranslate') {
    return {
      name: 'libretranslate',
      translate: (texts, req) =>
        http.batched(texts, async (batch) => {
          const body = await http.post(`${base}/translate`, {
            q: batch,
            source: LIBRETRANSLATE_CODES[req.source] ?? req.source,
            target: LIBRETRANSLATE_CODES[req.target] ?? req.target,
            format: 'text',
            ...(key ? { api_key: key } : {}),
          });
          const out = (body as { translatedText?: unknown }).translatedText;
          const list = typeof out === 'string' && batch.length === 1 ? [out] : out;
          if (!Array.isArray(list) || list.length !== batch.length || !list.every((t) => typeof t === 'string')) {
            throw new RetryableError(`the engine answered without ${batch.length} translated texts`);
          }
          return list as string[];
        }),
    };
  }
  const model = config.translationModel;
  if (!model) throw new EngineError('TRANSLATION_ENGINE is openai but TRANSLATION_MODEL is not set');
  return {
    name: 'openai',
    translate: (texts, req) =>
      http.batched(texts, async (batch) => {
        const system = [
          `You translate documentation from ${LANGUAGE_NAMES[req.source] ?? req.source} to ${LANGUAGE_NAMES[req.target] ?? req.target}.`,
          'The user sends a JSON object {"texts": [...]}. Answer with only a JSON object {"translations": [...]} holding the translation of each text, in the same order and the same number.',
          'Keep placeholders such as ⟦0⟧ exactly as they are, and keep leading and trailing spaces, punctuation and capitalisation style.',
          ...(req.instructions ? [`Instructions from the authors:\n${req.instructions}`] : []),
        ].join('\n');
        const body = await http.post(
          `${base}/chat/completions`,
          {
            model,
            temperature: 0,
            messages: [
              { role: 'system', content: system },
              { role: 'user', content: JSON.stringify({ texts: batch }) },
            ],
          },
          key ? { authorization: `Bearer ${key}` } : {},
        );
        const content = (body as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
        if (typeof content !== 'string') throw new RetryableError('the engine answered without a message');
        const list = parseTranslations(content);
        if (!list || list.length !== batch.length) throw new RetryableError(`the engine did not answer with ${batch.length} translations`);
        return list;
      }),
  };
}

/** The array of translations in a model's answer (a JSON object or array, maybe in a code fence). */
function parseTranslations(content: string): string[] | undefined {
  const text = content.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { translations?: unknown })?.translations;
  return Array.isArray(list) && list.every((t) => typeof t === 'string') ? (list as string[]) : undefined;
}

/** A failure worth another try: a 429 or 5xx answer, a network error, a malformed answer. */
class RetryableError extends EngineError {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

class EngineHttp {
  private readonly batchSize: number;
  private readonly batchChars: number;
  private readonly attempts: number;
  private readonly backoffMs: (retry: number) => number;

  constructor(
    private readonly config: Config,
    options: EngineOptions,
  ) {
    this.batchSize = options.batchSize ?? 50;
    this.batchChars = options.batchChars ?? 8000;
    this.attempts = options.attempts ?? 5;
    this.backoffMs = options.backoffMs ?? ((retry) => Math.min(30_000, config.translationRetryBaseMs * 2 ** (retry - 1)));
  }

  /** Cuts texts into batches (by count and size), translates them one after another, in order. */
  async batched(texts: string[], call: (batch: string[]) => Promise<string[]>): Promise<string[]> {
    const out: string[] = [];
    let batch: string[] = [];
    let chars = 0;
    const flush = async () => {
      if (!batch.length) return;
      out.push(...(await this.withRetries(batch, call)));
      batch = [];
      chars = 0;
    };
    for (const text of texts) {
      if (batch.length && (batch.length >= this.batchSize || chars + text.length > this.batchChars)) await flush();
      batch.push(text);
      chars += text.length;
    }
    await flush();
    return out;
  }

  private async withRetries(batch: string[], call: (batch: string[]) => Promise<string[]>): Promise<string[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call(batch);
      } catch (err) {
        if (!(err instanceof RetryableError) || attempt >= this.attempts) {
          const message = err instanceof Error ? err.message : String(err);
          throw new EngineError(attempt > 1 ? `${message} (after ${attempt} attempts)` : message);
        }
        const delay = Math.max(this.backoffMs(attempt), Math.min(err.retryAfterMs ?? 0, 60_000));
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** POSTs JSON and reads a JSON answer, within the timeout, to an address the configuration allows. */
  async post(url: string, payload: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    const target = new URL(url);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('timeout')), this.config.translationTimeoutMs);
    try {
      const addresses = await vettedAddresses(target, this.config, controller.signal).catch((err: Error) => {
        if (controller.signal.aborted) throw err;
        // The file-fetch wording does not fit here: say which setting opens the door.
        throw new EngineError(
          /private address/.test(err.message)
            ? `the translation engine at ${target.host} has a private or loopback address: set FETCH_ALLOW_PRIVATE=true (or FETCH_ALLOW_CIDRS) to allow it`
            : `cannot reach the translation engine at ${target.host}: ${err.message.replace(/^files: /, '')}`,
        );
      });
      const data = Buffer.from(JSON.stringify(payload));
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
          target,
          {
            method: 'POST',
            signal: controller.signal,
            agent: false,
            lookup: pinnedLookup(addresses),
            headers: { 'content-type': 'application/json', 'content-length': String(data.byteLength), accept: 'application/json', 'user-agent': 'Folio', ...headers },
          },
          resolve,
        );
        req.on('error', reject);
        req.end(data);
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res as AsyncIterable<Buffer>) {
        size += chunk.byteLength;
        if (size > 32 * 1024 * 1024) throw new EngineError('the translation engine answered more than 32 MB');
        chunks.push(chunk);
      }
      const text = Buffer.concat(chunks).toString('utf8');
      const status = res.statusCode ?? 0;
      if (status === 429 || status >= 500) {
        const retryAfter = Number(res.headers['retry-after']);
        throw new RetryableError(`the translation engine answered ${status}${detail(text)}`, Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined);
      }
      if (status < 200 || status >= 300) throw new EngineError(`the translation engine answered ${status}${detail(text)}`);
      try {
        return JSON.parse(text);
      } catch {
        throw new RetryableError('the translation engine answered with something that is not JSON');
      }
    } catch (err) {
      if (controller.signal.aborted) throw new RetryableError(`the translation engine did not answer within ${this.config.translationTimeoutMs} ms`);
      if (err instanceof EngineError) throw err;
      throw new RetryableError(`cannot reach the translation engine at ${target.host}: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The start of an error answer, for the message. */
function detail(body: string): string {
  let text = body;
  try {
    const parsed = JSON.parse(body);
    text = typeof parsed?.error === 'string' ? parsed.error : typeof parsed?.error?.message === 'string' ? parsed.error.message : body;
  } catch {
    // plain text
  }
  text = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return text ? `: ${text}` : '';
}
