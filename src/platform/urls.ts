import type { Config } from './config.ts';

/** Builds the absolute `urls.*` of resources from PUBLIC_URL (API) and APP_URL (application). */
export class Urls {
  constructor(private readonly config: Pick<Config, 'publicUrl' | 'appUrl'>) {}

  api(path: string): string {
    return `${this.config.publicUrl}/v1${path}`;
  }

  app(path: string): string {
    return `${this.config.appUrl}/app${path}`;
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
