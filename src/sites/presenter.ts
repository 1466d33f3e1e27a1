import type { Ctx } from '../platform/context.ts';
import type {
  RoleOrGuest,
  SiteRedirectRow,
  SiteRow,
  SiteSectionGroupRow,
  SiteSectionRow,
  SiteShareLinkRow,
  SiteSpaceRow,
  SpaceRow,
} from '../platform/db/schema.ts';
import { sitePermissions } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import { spaceRoles } from '../access/effective.ts';
import { presentSpaces } from '../spaces/service.ts';
import { sectionsByIds, spacesByIds } from './store.ts';
import type { SpaceResource } from '../spaces/schemas.ts';
import type {
  RedirectDestinationValue,
  SiteResource,
  SiteSectionGroupResource,
  SiteSectionResource,
  SiteSpaceResource,
} from './schemas.ts';

/**
 * Where Folio serves a site: behind its proxy origin or custom hostname when it has one, else
 * PUBLIC_URL/<organization id>/<basename>/.
 */
export function siteBaseUrl(urls: Urls, site: Pick<SiteRow, 'organization_id' | 'basename' | 'hostname' | 'proxy'>): string {
  if (site.proxy) return `https://${site.proxy}/`;
  if (site.hostname) return `https://${site.hostname}/`;
  return urls.site(`/${encodeURIComponent(site.organization_id)}/${encodeURIComponent(site.basename)}/`);
}

/** The address the site is served at by Folio itself (the proxy target). */
export function siteOwnUrl(urls: Urls, site: Pick<SiteRow, 'organization_id' | 'basename' | 'hostname'>): string {
  return siteBaseUrl(urls, { ...site, proxy: null });
}

export function presentSite(urls: Urls, site: SiteRow, orgRole: RoleOrGuest | undefined, siteSpaces: number): SiteResource {
  return {
    object: 'site',
    id: site.id,
    type: site.type as SiteResource['type'],
    appliedType: site.type as SiteResource['type'],
    title: site.title,
    ...(site.hostname ? { hostname: site.hostname } : {}),
    basename: site.basename,
    ...(site.proxy ? { proxy: { origin: site.proxy, target: siteOwnUrl(urls, site) } } : {}),
    visibility: site.visibility,
    defaultLevel: 'inherit',
    published: site.published,
    siteSpaces,
    createdAt: site.created_at.toISOString(),
    adaptiveContent: { enabled: site.adaptive_content },
    agentsContext: site.agents_context,
    ads: { status: 'pending', submittable: false },
    features: [],
    permissions: sitePermissions(orgRole),
    urls: {
      location: urls.api(`/orgs/${site.organization_id}/sites/${site.id}`),
      app: urls.app(`/o/${site.organization_id}/sites/${site.id}`),
      preview: urls.app(`/o/${site.organization_id}/sites/${site.id}/preview`),
      ...(site.published ? { published: siteBaseUrl(urls, site) } : {}),
    },
  };
}

export function presentShareLink(urls: Urls, site: SiteRow, link: SiteShareLinkRow) {
  return {
    object: 'share-link' as const,
    id: link.id,
    createdAt: link.created_at.toISOString(),
    name: link.name,
    active: link.active,
    urls: link.active && site.published ? { published: shareLinkUrl(urls, site, link.token) } : {},
  };
}

export function shareLinkUrl(urls: Urls, site: SiteRow, token: string): string {
  return `${siteBaseUrl(urls, site)}?share=${encodeURIComponent(token)}`;
}

export function presentRedirect(row: SiteRedirectRow) {
  return {
    object: 'site-redirect' as const,
    id: row.id,
    source: row.source,
    draft: row.draft,
    captureWildcard: row.capture_wildcard,
    permanent: row.permanent,
    destination: row.destination as RedirectDestinationValue,
    createdAt: row.created_at.toISOString(),
    ...(row.updated_at ? { updatedAt: row.updated_at.toISOString() } : {}),
  };
}

/** Path of a site space under the site URL: its section's path unless default, then its own unless default. */
export function siteSpacePath(row: SiteSpaceRow, section: SiteSectionRow | undefined): string {
  const sectionPart = section && !section.is_default ? `${section.path}/` : '';
  return sectionPart + (row.is_default ? '' : `${row.path}/`);
}

/**
 * Presents a site's structure pieces. Spaces are loaded once for all site spaces given, with the
 * caller's role on each, so a page of any size costs a fixed number of queries.
 */
export class StructurePresenter {
  private spaces = new Map<string, SpaceResource>();
  private sections = new Map<string, SiteSectionRow>();

  constructor(
    private readonly ctx: Ctx,
    private readonly site: SiteRow,
    private readonly orgRole: RoleOrGuest | undefined,
    private readonly shareKey?: string,
  ) {}

  async load(siteSpaces: SiteSpaceRow[], sections: SiteSectionRow[]): Promise<this> {
    for (const s of sections) this.sections.set(s.id, s);
    const missingSections = [...new Set(siteSpaces.map((s) => s.section_id).filter((id): id is string => !!id && !this.sections.has(id)))];
    if (missingSections.length) {
      for (const s of await sectionsByIds(this.ctx.db, this.site.organization_id, missingSections)) this.sections.set(s.id, s);
    }
    const ids = [...new Set(siteSpaces.map((s) => s.space_id).filter((id) => !this.spaces.has(id)))];
    if (ids.length) {
      const rows: SpaceRow[] = await spacesByIds(this.ctx.db, this.site.organization_id, ids);
      const roles = await spaceRoles(this.ctx.db, this.site.organization_id, { userId: this.ctx.user.id, orgRole: this.orgRole }, rows);
      const presented = await presentSpaces(this.ctx.db, this.ctx.urls, rows.map((space) => ({ space, role: roles.get(space.id) ?? null })));
      for (const p of presented) this.spaces.set(p.id, p);
    }
    return this;
  }

  private published(path: string): { published?: string } {
    if (!this.site.published) return {};
    return { published: siteBaseUrl(this.ctx.urls, this.site) + path + (this.shareKey ? `?share=${encodeURIComponent(this.shareKey)}` : '') };
  }

  siteSpace(row: SiteSpaceRow): SiteSpaceResource {
    const space = this.spaces.get(row.space_id)!;
    const section = row.section_id ? this.sections.get(row.section_id) : undefined;
    return {
      object: 'site-space',
      id: row.id,
      path: row.path,
      ...(row.section_id ? { section: row.section_id } : {}),
      space,
      title: space.title,
      default: row.is_default,
      draft: false,
      ...(row.condition !== null ? { condition: row.condition } : {}),
      hidden: row.hidden,
      hasAdvancedCustomizationFeature: false,
      urls: this.published(siteSpacePath(row, section)),
    };
  }

  section(row: SiteSectionRow, siteSpaces: SiteSpaceRow[]): SiteSectionResource {
    return {
      object: 'site-section',
      id: row.id,
      title: row.title,
      ...(row.description !== null ? { description: row.description } : {}),
      default: row.is_default,
      draft: false,
      path: row.path,
      ...(row.condition !== null ? { condition: row.condition } : {}),
      ...(row.group_id ? { sectionGroup: row.group_id } : {}),
      siteSpaces: siteSpaces.map((s) => this.siteSpace(s)),
      urls: this.published(row.is_default ? '' : `${row.path}/`),
      ...(row.icon ? { icon: row.icon } : {}),
    };
  }

  group(
    row: SiteSectionGroupRow,
    childrenOf: (groupId: string) => (SiteSectionResource | SiteSectionGroupResource)[],
  ): SiteSectionGroupResource {
    const children = childrenOf(row.id);
    return {
      object: 'site-section-group',
      id: row.id,
      title: row.title,
      ...(row.parent_id ? { sectionGroup: row.parent_id } : {}),
      draft: false,
      sections: children.filter((c): c is SiteSectionResource => c.object === 'site-section'),
      children,
      ...(row.icon ? { icon: row.icon } : {}),
    };
  }
}
