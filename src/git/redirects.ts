import type { Db } from '../platform/db/database.ts';
import type { Manifest } from './convert.ts';
import { syncedManifest } from './store.ts';

/**
 * The page a `.gitbook.yaml` redirect of a git-synced space sends a URL path to (its id), as of
 * the last sync; undefined when no redirect names the path. Paths are relative to the space's
 * root on the site (`help/contact`), compared without leading or trailing slashes.
 */
export async function gitRedirectPage(db: Db, space: { id: string; organization_id: string }, path: string): Promise<string | undefined> {
  const source = path.replace(/^\/+|\/+$/g, '');
  if (!source) return undefined;
  const manifest = (await syncedManifest(db, space.organization_id, space.id)) as Manifest | null | undefined;
  const target = manifest?.redirects?.[source];
  if (!target) return undefined;
  for (const [id, page] of Object.entries(manifest!.pages)) if (page.path === target) return id;
  return undefined;
}
