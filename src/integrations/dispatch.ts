import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Services } from '../platform/context.ts';
import type { IntegrationEventRow } from '../platform/db/schema.ts';
import { FileBudget, pinnedLookup, vettedAddresses } from '../content/files.ts';
import { issueIntegrationToken } from './grants.ts';
import { newId } from '../platform/ids.ts';
import { DELIVER_JOB, PRUNE_EVENTS_JOB, pruneEvents } from '../events/outbox.ts';
import { releaseLease, renewLease, takeLease } from '../events/store.ts';
import { presentInstallation, presentIntegration, presentSiteInstallation, presentSpaceInstallation } from './presenter.ts';
import { runInSandbox, type LogLine } from './sandbox.ts';
import * as store from './store.ts';
import { decryptSecrets, integrationSigningSecret, SIGNATURE_HEADER, signatureHeader } from './secrets.ts';

interface Outcome {
  ok: boolean;
  logs: LogLine[];
}

const line = (level: LogLine['level'], message: string): LogLine => ({ level, message, timestamp: new Date().toISOString() });

/** The multipart body @gitbook/runtime reads: `event`, `environment` (JSON) and, for fetch events, `fetch-body`. */
export async function dispatchBody(event: unknown, environment: unknown, fetchBody?: string): Promise<{ body: Uint8Array; contentType: string }> {
  const form = new FormData();
  form.set('event', JSON.stringify(event));
  form.set('environment', JSON.stringify(environment));
  if (fetchBody !== undefined) form.set('fetch-body', fetchBody);
  const req = new Request('http://folio.invalid/v1', { method: 'POST', body: form });
  return { body: new Uint8Array(await req.arrayBuffer()), contentType: req.headers.get('content-type')! };
}

/**
 * What the integration receives along with an event: Folio's API endpoint, fresh tokens (of the
 * integration, and of the installation while it exists), the installation, its secrets, and the
 * secret to check Folio's signatures with.
 */
async function environmentFor(services: Services, event: IntegrationEventRow) {
  const { db, urls } = services;
  const integration = await store.findIntegrationById(db, event.integration_id);
  if (!integration) return undefined;
  const owner = await store.owningOrganization(db, integration.organization_id);
  const installation = event.installation_id ? await store.findInstallationById(db, event.installation_id) : undefined;
  const spaceInstallation = installation && event.space_id ? await store.findTargetInstallation(db, 'space', installation.id, event.space_id) : undefined;
  // Site events (a site loading its script, a view, feedback) carry the site installation, whose
  // configuration is what a site script is usually about (a tracking id, a widget key).
  const siteId = (event.payload as { siteId?: unknown }).siteId;
  const siteInstallation = installation && typeof siteId === 'string' ? await store.findTargetInstallation(db, 'site', installation.id, siteId) : undefined;
  const secret = integrationSigningSecret(services.signingKey, integration.id);
  return {
    integration,
    secret,
    environment: {
      apiEndpoint: services.config.publicUrl,
      apiTokens: {
        integration: await issueIntegrationToken(db, integration.id, null),
        ...(installation ? { installation: await issueIntegrationToken(db, integration.id, installation.id) } : {}),
      },
      integration: presentIntegration(urls, integration, owner, undefined),
      ...(installation ? { installation: presentInstallation(urls, integration, installation, 0) } : {}),
      ...(spaceInstallation ? { spaceInstallation: presentSpaceInstallation(urls, integration, spaceInstallation, spaceInstallation.space_id) } : {}),
      ...(siteInstallation ? { siteInstallation: presentSiteInstallation(urls, integration, siteInstallation, siteInstallation.site_id) } : {}),
      signingSecrets: { integration: secret },
      secrets: decryptSecrets(services.signingKey, integration.secrets_encrypted),
    },
  };
}

/** POSTs to a URL on an address the configuration allows (FETCH_ALLOW_PRIVATE, FETCH_ALLOW_CIDRS). */
async function postVetted(services: Services, url: URL, body: Uint8Array, headers: Record<string, string>, timeoutMs: number): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('timeout')), timeoutMs);
  try {
    const addresses = await vettedAddresses(url, new FileBudget(services.config).config, controller.signal);
    return await new Promise((resolve, reject) => {
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
        url,
        { method: 'POST', signal: controller.signal, agent: false, lookup: pinnedLookup(addresses), headers: { ...headers, 'content-length': String(body.byteLength) } },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.byteLength;
            if (size <= 64 * 1024) chunks.push(c);
          });
          const answerHeaders: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') answerHeaders[k] = v;
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: answerHeaders, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What a script may fetch: Folio's own API (PUBLIC_URL, how it calls back), and other URLs on
 * addresses the configuration allows (public ones; private ones only with FETCH_ALLOW_PRIVATE or
 * FETCH_ALLOW_CIDRS).
 */
function outboundFor(services: Services) {
  const own = new URL(services.config.publicUrl).origin;
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.origin !== own) {
      try {
        await vettedAddresses(url, new FileBudget(services.config).config, AbortSignal.timeout(services.config.fetchTimeoutMs));
      } catch (err) {
        return new Response(`Folio refused to fetch ${url.origin}: ${(err as Error).message.replace(/^files: /, '')}`, { status: 403 });
      }
    }
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    return fetch(url, { method: request.method, headers: request.headers, body, redirect: 'manual', signal: AbortSignal.timeout(services.config.fetchTimeoutMs) });
  };
}

/** Delivers one event: to the dev tunnel when development mode is on, else to the published script. */
export async function deliverEvent(services: Services, event: IntegrationEventRow, fetchBody?: string): Promise<Outcome & { response?: { status: number; headers: Record<string, string>; body: string } }> {
  const env = await environmentFor(services, event);
  if (!env) return { ok: false, logs: [line('error', 'The integration was unpublished before the event could be delivered')] };
  const { integration, environment, secret } = env;
  const request = await dispatchBody(event.payload, environment, fetchBody);
  const limits = {
    timeoutMs: services.config.integrationTimeoutMs,
    subrequests: services.config.integrationSubrequestLimit,
    memoryMb: services.config.integrationMemoryMb,
    cpuMs: services.config.integrationCpuMs,
  };
  if (integration.dev_tunnel_url) {
    const url = new URL(integration.dev_tunnel_url);
    try {
      const res = await postVetted(services, url, request.body, { 'content-type': request.contentType, [SIGNATURE_HEADER]: signatureHeader(secret, request.body) }, limits.timeoutMs);
      const ok = res.status >= 200 && res.status < 300;
      return { ok, logs: [line(ok ? 'debug' : 'error', `Development tunnel ${url.origin} answered ${res.status}`)], response: { status: res.status, headers: res.headers, body: res.text } };
    } catch (err) {
      return { ok: false, logs: [line('error', `Development tunnel ${url.origin} unreachable: ${(err as Error).message.replace(/^files: /, '')}`)] };
    }
  }
  if (!integration.script) return { ok: false, logs: [line('error', 'The integration has no script and no development tunnel to deliver to')] };
  try {
    const result = await runInSandbox(`${integration.id}@${integration.version}`, integration.script, request, limits, outboundFor(services));
    const ok = result.status >= 200 && result.status < 300;
    return { ok, logs: [...result.logs, line(ok ? 'debug' : 'error', `Script answered ${result.status}`)], response: { status: result.status, headers: result.headers, body: result.body } };
  } catch (err) {
    return { ok: false, logs: [line('error', (err as Error).message)] };
  }
}

/** Retry number `attempt` waits base × 2^(attempt-1), at most ten minutes. */
export function retryDelay(baseMs: number, attempt: number): number {
  return Math.min(10 * 60_000, baseMs * 2 ** (attempt - 1));
}

/** How long a delivery lease lasts without renewal: how soon another worker takes over from a dead one. */
const LEASE_MS = 15_000;

/**
 * Job: delivers the pending events of one installation, oldest first, one at a time. An event
 * that fails is retried with exponential backoff and holds back the later ones (order per
 * installation); after INTEGRATION_MAX_ATTEMPTS it is recorded as failed and the next one goes.
 * A delivery in flight when the process dies is delivered again (same eventId) once its lease
 * runs out.
 */
export function deliverJob(services: Services) {
  const { db, jobs, config } = services;
  return async (payload: { installationId: string }) => {
    const installationId = payload.installationId;
    if (!(await takeLease(db, installationId, LEASE_MS))) {
      // Another worker is delivering this installation's events; look again once it may be done.
      await jobs.enqueue(DELIVER_JOB, { installationId }, { runAt: new Date(services.now() + 1000) });
      return;
    }
    // The lease is renewed while this worker delivers; a worker that dies loses it within LEASE_MS.
    const renew = setInterval(() => void renewLease(db, installationId, LEASE_MS).catch(() => {}), LEASE_MS / 3);
    renew.unref();
    try {
      for (;;) {
        const event = await store.nextPendingEvent(db, installationId);
        if (!event) return;
        if (event.next_attempt_at.getTime() > services.now()) {
          await jobs.enqueue(DELIVER_JOB, { installationId }, { runAt: event.next_attempt_at });
          return;
        }
        const attempt = event.attempts + 1;
        const outcome = await deliverEvent(services, event);
        const logs = [...(event.logs as LogLine[]), ...outcome.logs.map((l) => ({ ...l, message: `[attempt ${attempt}] ${l.message}` }))].slice(-2000);
        if (outcome.ok || attempt >= config.integrationMaxAttempts) {
          await store.recordAttempt(db, event.id, { status: outcome.ok ? 'success' : 'failed', attempts: attempt, logs, deliveredAt: new Date() });
          continue;
        }
        const next = new Date(services.now() + retryDelay(config.integrationRetryBaseMs, attempt));
        await store.recordAttempt(db, event.id, { attempts: attempt, logs, nextAttemptAt: next });
        await jobs.enqueue(DELIVER_JOB, { installationId }, { runAt: next });
        return;
      }
    } finally {
      clearInterval(renew);
      await releaseLease(db, installationId);
    }
  };
}

/** Job: prunes events past the retention, then queues itself again in an hour. */
export function pruneJob(services: Services) {
  return async () => {
    await pruneEvents(services.db, services.config.integrationEventRetentionMs);
    await services.jobs.enqueue(PRUNE_EVENTS_JOB, {}, { runAt: new Date(services.now() + 3600_000) });
  };
}

/** Registers the delivery and pruning jobs, and queues the first pruning unless one is queued. */
export async function registerIntegrationJobs(services: Services): Promise<void> {
  services.jobs.register(DELIVER_JOB, deliverJob(services), { maxAttempts: 1000 });
  services.jobs.register(PRUNE_EVENTS_JOB, pruneJob(services));
  if (!(await store.jobWaiting(services.db, PRUNE_EVENTS_JOB))) await services.jobs.enqueue(PRUNE_EVENTS_JOB, {}, { runAt: new Date(services.now() + 60_000) });
  // A delivery cut off by a crash resumes now (once its lease runs out), not when its job's lease does.
  for (const installationId of await store.installationsWithPendingEvents(services.db)) await services.jobs.enqueue(DELIVER_JOB, { installationId });
}

/**
 * Delivers one event now, outside the outbox, for a caller waiting on the answer (a request to the
 * public endpoint, a site loading a script, content computed on request). It is recorded with its
 * trace like any event; an event about a space names it, so the script gets its space installation.
 */
export async function dispatchNow(
  services: Services,
  target: { integrationId: string; installationId?: string | undefined; spaceId?: string | undefined },
  payload: { type: string } & Record<string, unknown>,
  fetchBody?: string,
): Promise<Outcome & { response?: { status: number; headers: Record<string, string>; body: string } }> {
  // Recorded once delivered, with its outcome: a `pending` row would be the outbox's to deliver
  // (again) while this delivery runs.
  const id = newId();
  const now = new Date();
  const event: IntegrationEventRow = {
    id,
    seq: 0,
    integration_id: target.integrationId,
    installation_id: target.installationId ?? null,
    space_id: target.spaceId ?? null,
    payload: { eventId: id, ...(target.installationId ? { installationId: target.installationId } : {}), ...payload },
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    logs: [],
    created_at: now,
    delivered_at: null,
  };
  const outcome = await deliverEvent(services, event, fetchBody);
  await store.insertDeliveredEvent(services.db, event, outcome, now);
  return outcome;
}

/**
 * A request to a public endpoint (`urls.publicEndpoint`) of an integration, or of one of its
 * installations, forwarded to the script as a `fetch` event, answered with the script's response.
 * `missing` when there is no such integration or installation, `unanswerable` when the integration
 * has neither a published script nor a development tunnel (nothing serves its endpoint: not an
 * upstream failure, and nothing is recorded). A script that fails to answer (it does not load,
 * throws before answering, runs out of time or memory) is the upstream's failure: a 502.
 */
export async function forwardFetch(
  services: Services,
  target: { integrationName: string; installationId?: string | undefined },
  request: { url: string; method: string; headers: Record<string, string>; body: string | undefined },
): Promise<{ status: number; headers: Record<string, string>; body: string } | 'missing' | 'unanswerable'> {
  const found = await store.findEndpointTarget(services.db, target.integrationName, target.installationId);
  if (!found) return 'missing';
  if (!found.answerable) return 'unanswerable';
  const outcome = await dispatchNow(
    services,
    { integrationId: found.integrationId, ...(found.installationId ? { installationId: found.installationId } : {}) },
    { type: 'fetch', request: { url: request.url, method: request.method, headers: request.headers } },
    request.body,
  );
  return (
    outcome.response ?? {
      status: 502,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { code: 502, message: 'The integration did not answer: its script failed to load or run, or its development tunnel is unreachable (its events have the trace)' } }),
    }
  );
}
