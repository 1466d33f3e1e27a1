import type { Ctx, Services } from '../platform/context.ts';
import type { SpaceRow } from '../platform/db/schema.ts';
import { HttpError } from '../platform/errors.ts';
import { dispatchNow } from './dispatch.ts';
import * as store from './store.ts';

/**
 * Content computed by an integration (`integration:<name>:<sourceId>` sources): the source's
 * event (`content_compute_document` or `content_compute_revision`, as @gitbook/runtime's
 * `createContentSource` handles them) is delivered now to the installation of the integration
 * that covers the space, and its JSON answer is returned for the caller to check. Each call is
 * recorded with its trace among the integration's events.
 */

/** Computations being answered by integrations in this process, by installation, space, source and props. */
const computing = new Map<string, number>();

/** Failures of the integration itself: its script, its answer. */
export class IntegrationAnswerError extends HttpError {
  constructor(message: string) {
    super(502, message);
  }
}

/**
 * The active installation of the integration that covers the space (all spaces of its
 * organization, or this one selected), and the content source it declares; 404 saying which
 * is missing.
 */
async function installationFor(services: Services, space: Pick<SpaceRow, 'id' | 'organization_id'>, name: string, sourceId: string) {
  const { db } = services;
  const integration = await store.findContentSources(db, name);
  const installation = integration
    ? await store.coveringInstallation(db, space, integration.id)
    : undefined;
  // An integration not installed here is not told apart from one that does not exist.
  if (!integration || !installation) throw new HttpError(404, `source.type: the integration "${name}" is not installed on this space; install it on the space first`);
  const sources = Array.isArray(integration.content_sources) ? (integration.content_sources as { id?: unknown }[]) : [];
  if (!sources.some((s) => s?.id === sourceId)) {
    const ids = sources.map((s) => String(s?.id)).join(', ');
    throw new HttpError(404, `source.type: the integration "${name}" declares no content source "${sourceId}" (${ids ? `its content sources: ${ids}` : 'it declares none'})`);
  }
  return { integrationId: integration.id, installationId: installation.id };
}

/** The error an answer carries: @gitbook/runtime answers `{"error": "…"}`; else the start of the text. */
function answerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (typeof parsed?.error === 'string') return parsed.error;
    if (parsed?.error && typeof parsed.error === 'object' && typeof (parsed.error as { message?: unknown }).message === 'string') return (parsed.error as { message: string }).message;
  } catch {
    // not JSON: the text itself says what happened
  }
  return body.trim().slice(0, 300) || '(no body)';
}

/**
 * Delivers the compute event now and returns the parsed JSON of a 2xx answer. 502 when the
 * script cannot be run, fails, or answers something that is not JSON, with what it said.
 */
export async function computeWithIntegration(
  ctx: Ctx,
  space: Pick<SpaceRow, 'id' | 'organization_id'>,
  source: { name: string; sourceId: string },
  event: { type: 'content_compute_document' | 'content_compute_revision'; props: Record<string, unknown>; dependencies: Record<string, unknown> },
): Promise<unknown> {
  const target = await installationFor(ctx, space, source.name, source.sourceId);
  const key = JSON.stringify([target.installationId, space.id, source.sourceId, event.type, event.props]);
  // The integration asking, while it answers, for the very computation it is answering would wait
  // on itself (each answer asking again) until the integration timeout: refused at once instead.
  if (ctx.integration?.integrationId === target.integrationId && computing.has(key)) {
    throw new HttpError(
      409,
      `The integration "${source.name}" asked for the computation it is answering (${event.type} of "${source.sourceId}" with the same props): compute the content in the handler instead of asking Folio for it`,
    );
  }
  computing.set(key, (computing.get(key) ?? 0) + 1);
  let outcome: Awaited<ReturnType<typeof dispatchNow>>;
  try {
    outcome = await dispatchNow(ctx, { ...target, spaceId: space.id }, { type: event.type, spaceId: space.id, sourceId: source.sourceId, props: event.props, dependencies: event.dependencies });
  } finally {
    const left = computing.get(key)! - 1;
    if (left) computing.set(key, left);
    else computing.delete(key);
  }
  const who = `The integration "${source.name}"`;
  const response = outcome.response;
  if (!response) {
    const reason = [...outcome.logs].reverse().find((l) => l.level === 'error')?.message ?? 'it could not be run';
    throw new IntegrationAnswerError(`${who} could not compute the content: ${reason}`);
  }
  if (response.status < 200 || response.status >= 300) {
    throw new IntegrationAnswerError(`${who} failed to compute the content (it answered ${response.status}: ${answerMessage(response.body)})`);
  }
  try {
    return JSON.parse(response.body);
  } catch {
    throw new IntegrationAnswerError(`${who} answered ${event.type} with something that is not JSON: ${response.body.slice(0, 200)}`);
  }
}
