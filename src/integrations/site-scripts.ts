import { answerStamp } from '../events/coverage.ts';
import type { Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { Urls } from '../platform/urls.ts';
import { AnswerCache } from './answer-cache.ts';
import { dispatchNow } from './dispatch.ts';
import * as store from './store.ts';

/**
 * What integrations do on a published site: the installations that cover it, the scripts they
 * inject (each answered by the integration's own script through a `fetch_published_script` event),
 * and the Content-Security-Policy sources those scripts need.
 */

export interface SiteIntegration {
  installationId: string;
  integrationId: string;
  name: string;
  scopes: string[];
  contentSecurityPolicy: unknown;
  /** The integration has something to run: a published script or a development tunnel. */
  runnable: boolean;
  /** Changes whenever what the integration answers for this site may change (version, configuration). */
  stamp: string;
}

/**
 * The active installations covering a site: installed on it (and active there), or installed for
 * all sites of the organization. Only integrations that install on sites.
 */
export async function siteIntegrations(db: Db, site: { id: string; organization_id: string }, installationId?: string): Promise<SiteIntegration[]> {
  const rows = await store.siteIntegrationRows(db, site, installationId);
  return rows.map((r) => ({
    installationId: r.installation_id,
    integrationId: r.integration_id,
    name: r.name,
    scopes: r.scopes as string[],
    contentSecurityPolicy: r.content_security_policy,
    runnable: !!r.runnable,
    stamp: answerStamp(r.version, r.integration_updated, r.installation_updated, r.site_installation_updated),
  }));
}

export const injectsScript = (i: SiteIntegration) => i.runnable && i.scopes.includes('site:script:inject');

/** Where a site's pages load an installation's script from (Folio's API, so one address serves every hostname). */
export function publishedScriptUrl(urls: Urls, integration: SiteIntegration, siteId: string): string {
  const path = `/integrations/${encodeURIComponent(integration.name)}/installations/${encodeURIComponent(integration.installationId)}/sites/${encodeURIComponent(siteId)}/script.js`;
  // The stamp makes a new version or configuration a new URL, so browsers may cache each one.
  return `${urls.api(path)}?v=${integration.stamp}`;
}

/** A policy as the string the official `SiteIntegrationScript.contentSecurityPolicy` holds. */
export function policyText(policy: unknown): string | undefined {
  if (typeof policy === 'string') return policy.trim() || undefined;
  if (policy && typeof policy === 'object') {
    const text = Object.entries(policy as Record<string, unknown>)
      .filter(([, v]) => typeof v === 'string')
      .map(([k, v]) => `${k} ${v as string}`.trim())
      .join('; ');
    return text || undefined;
  }
  return undefined;
}

/** The scripts a site's pages load (the official `SiteIntegrationScript`). */
export function siteScripts(urls: Urls, siteId: string, integrations: SiteIntegration[]) {
  return integrations.filter(injectsScript).map((i) => {
    const policy = policyText(i.contentSecurityPolicy);
    return { script: publishedScriptUrl(urls, i, siteId), cookies: i.scopes.includes('site:script:cookies'), ...(policy ? { contentSecurityPolicy: policy } : {}) };
  });
}

/** Directives an integration's policy may add sources to; the others (frame-ancestors, base-uri, sandbox, …) stay the site's. */
const EXTENSIBLE = new Set(['script-src', 'script-src-elem', 'connect-src', 'img-src', 'style-src', 'style-src-elem', 'font-src', 'frame-src', 'child-src', 'media-src', 'worker-src', 'manifest-src']);

/** A host or scheme source (`https://cdn.example.com`, `*.example.com:443/path`, `https:`); never a keyword, nonce or hash, never a bare `*`. */
const SOURCE = /^(?:[a-z][a-z0-9+.-]*:|(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::(?:\d{1,5}|\*))?(?:\/[^\s;,']*)?)$/i;

/**
 * The sources the site's scripts need, by directive: Folio's own origin (where the scripts are
 * served from) and what each integration's policy asks for. An integration can add hosts, never
 * weaken the policy with keywords (`'unsafe-inline'`, `'unsafe-eval'`, nonces) or a bare `*`.
 */
export function scriptSources(publicUrl: string, integrations: SiteIntegration[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (directive: string, source: string) => {
    let set = out.get(directive);
    if (!set) out.set(directive, (set = new Set()));
    set.add(source);
  };
  const scripts = integrations.filter(injectsScript);
  if (scripts.length === 0) return out;
  add('script-src', new URL(publicUrl).origin);
  for (const i of scripts) {
    const text = policyText(i.contentSecurityPolicy);
    if (!text) continue;
    for (const part of text.split(';')) {
      const [name, ...sources] = part.trim().split(/\s+/);
      const directive = name?.toLowerCase();
      if (!directive || !EXTENSIBLE.has(directive)) continue;
      for (const source of sources) if (SOURCE.test(source)) add(directive === 'script-src-elem' ? 'script-src' : directive === 'style-src-elem' ? 'style-src' : directive, source);
    }
  }
  return out;
}

// ------------------------------------------------------------ serving a script

/** Script answers by installation and site, for a minute (a failure for ten seconds): many visitors, one run. */
const scripts = new AnswerCache<{ status: number; body: string }>(60_000, 10_000);
const FAILED_TTL_MS = 10_000;

/**
 * The JavaScript an installation injects into a site: the answer of its script to a
 * `fetch_published_script` event, shared by concurrent and later visitors until its version or
 * configuration changes or a minute passes. Undefined when the installation does not inject a
 * script into this (published) site.
 */
export async function publishedScript(services: Services, name: string, installationId: string, siteId: string): Promise<{ status: number; body: string } | undefined> {
  const site = await store.findPublishedSite(services.db, siteId);
  if (!site) return undefined;
  const [integration] = await siteIntegrations(services.db, site, installationId);
  if (!integration || integration.name !== name || !injectsScript(integration)) return undefined;
  return scripts.get(`${installationId}|${siteId}`, integration.stamp, async (keepFor) => {
    const outcome = await dispatchNow(services, integration, { type: 'fetch_published_script', siteId });
    const response = outcome.response;
    if (outcome.ok && response) return { status: 200, body: response.body };
    keepFor(FAILED_TTL_MS);
    return { status: 502, body: `/* The integration ${name} did not provide its script (${response ? `it answered ${response.status}` : 'it could not be run'}). */` };
  });
}
