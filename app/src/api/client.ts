/**
 * The app's HTTP client: the same /v1 API every client uses (types from the official
 * `@gitbook/api` package), authenticated by the session cookie that /app/api/sign-in sets. Writes
 * carry the CSRF header the server asks of cookie-authenticated calls.
 */

export const CSRF_HEADER = 'x-folio-csrf';

/** A page a refused merge conflicts on, as the API lists it beside the error's message. */
export interface ApiConflict {
  page: string;
  title: string;
  reason: string;
}

/** An API error, with the `{ error: { code, message } }` the server answers (and `conflicts` when a merge is refused for them). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly conflicts: ApiConflict[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** What to tell a person about a failed call: the server's message, or that it could not be reached. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  // fetch rejects with a TypeError when the request never got an answer.
  if (err instanceof TypeError) return 'Could not reach the server. Check your connection and try again.';
  return err instanceof Error ? err.message : String(err);
}

type Listener = () => void;
const sessionEndedListeners = new Set<Listener>();

/** Called when a call answers 401: the session has ended (expired, signed out elsewhere, revoked). */
export function onSessionEnded(listener: Listener): () => void {
  sessionEndedListeners.add(listener);
  return () => sessionEndedListeners.delete(listener);
}

/** Tells the app the session ended (a call answered 401, or the co-editing server refused it). */
export function sessionEnded(): void {
  for (const listener of sessionEndedListeners) listener();
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
}

function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

/** Calls the server at `path` (absolute, e.g. `/v1/orgs`); answers the parsed JSON, or undefined for 204. */
export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers[CSRF_HEADER] = '1';
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(withQuery(path, options.query), {
    method,
    headers,
    credentials: 'same-origin',
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const json: unknown = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const message = errorMessage(json) ?? `${response.status} ${response.statusText}`;
    if (response.status === 401 && !path.startsWith('/app/api/sign-in')) sessionEnded();
    throw new ApiError(response.status, message, errorConflicts(json));
  }
  return json as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorMessage(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null || !('error' in json)) return undefined;
  const error = (json as { error: unknown }).error;
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') return error.message;
  return undefined;
}

function errorConflicts(json: unknown): ApiConflict[] {
  if (typeof json !== 'object' || json === null || !('error' in json)) return [];
  const error = (json as { error: unknown }).error;
  if (typeof error !== 'object' || error === null || !('conflicts' in error) || !Array.isArray(error.conflicts)) return [];
  return error.conflicts as ApiConflict[];
}

/** `/v1` + path. */
export const api = {
  get: <T>(path: string, query?: RequestOptions['query']) => request<T>(`/v1${path}`, { query }),
  post: <T>(path: string, body?: unknown, query?: RequestOptions['query']) => request<T>(`/v1${path}`, { method: 'POST', body: body ?? {}, query }),
  put: <T>(path: string, body?: unknown) => request<T>(`/v1${path}`, { method: 'PUT', body: body ?? {} }),
  patch: <T>(path: string, body?: unknown) => request<T>(`/v1${path}`, { method: 'PATCH', body: body ?? {} }),
  delete: <T = void>(path: string) => request<T>(`/v1${path}`, { method: 'DELETE' }),
};

/** Every item of a paged list (`{items, next: {page}}`), following `next` up to `limit` items. */
export async function listAll<T>(path: string, query: RequestOptions['query'] = {}, limit = 1000): Promise<T[]> {
  const items: T[] = [];
  let page: string | undefined;
  do {
    const result = await api.get<{ items: T[]; next?: { page: string } }>(path, { ...query, limit: 100, page });
    items.push(...result.items);
    page = result.next?.page;
  } while (page && items.length < limit);
  return items;
}
