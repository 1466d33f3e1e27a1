import type { Config } from './config.ts';

/**
 * Builds the absolute `urls.*` of resources from PUBLIC_URL (API) and APP_URL (application).
 * The `urls.app` of a resource names the screen of the app that shows it (app/src/App.tsx's
 * routes); the helpers below are the one place those paths are written.
 */
export class Urls {
  constructor(private readonly config: Pick<Config, 'publicUrl' | 'appUrl'>) {}

  api(path: string): string {
    return `${this.config.publicUrl}/v1${path}`;
  }

  app(path: string): string {
    return `${this.config.appUrl}/app${path}`;
  }

  /** The app's screen of an organization. */
  organizationApp(organizationId: string): string {
    return this.app(`/o/${organizationId}`);
  }

  /** The app's screen of a space. */
  spaceApp(spaceId: string): string {
    return this.app(`/s/${spaceId}`);
  }

  /** The app's screen of a change request, as GitBook writes it: `/s/<space>/~/changes/<number>`. */
  changeRequestApp(spaceId: string, number: number): string {
    return this.app(changeRequestAppPath(spaceId, number));
  }

  /**
   * The app's screen of a page: `/s/<space>/<page path>`, or inside a change request
   * `/s/<space>/~/changes/<number>/<page path>`. A page with an empty path (none is stored so, but
   * a computed one could be) is the space's (or change request's) own screen, without a trailing slash.
   */
  pageApp(scope: PageUrlScope, path: string): string {
    const base = scope.changeRequest !== undefined ? changeRequestAppPath(scope.id, scope.changeRequest) : `/s/${scope.id}`;
    return this.app(path ? `${base}/${path}` : base);
  }

  user(id: string): string {
    return this.api(`/users/${encodeURIComponent(id)}`);
  }

  /** A URL under PUBLIC_URL outside the API (published sites). */
  site(path: string): string {
    return `${this.config.publicUrl}${path}`;
  }

  organization(id: string): string {
    return this.api(`/orgs/${encodeURIComponent(id)}`);
  }
}

/** Where pages are read: a space (its current content or a revision) or a change request of it (its number). */
export interface PageUrlScope {
  /** The space's id. */
  id: string;
  changeRequest?: number | undefined;
}

function changeRequestAppPath(spaceId: string, number: number): string {
  return `/s/${spaceId}/~/changes/${number}`;
}
