import { createHash } from 'node:crypto';
import type { RepoReader, TreeFile } from '../git/repo.ts';

/**
 * An in-memory repository in GitBook's git-sync format (SUMMARY.md, GitBook Markdown, assets):
 * what every import source is turned into before the git importer (importTree) builds the
 * content tree from it, so links, assets, groups and blocks behave exactly as with git sync.
 * It has one commit, `VIRTUAL_COMMIT`; blob ids are git's (sha1 of "blob <size>\0" + bytes).
 */
export const VIRTUAL_COMMIT = 'virtual';

export class VirtualRepo implements RepoReader {
  private readonly byOid = new Map<string, Buffer>();
  private readonly list: TreeFile[] = [];

  constructor(files: Map<string, Buffer | string>) {
    for (const [path, content] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
      const oid = createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
      this.byOid.set(oid, data);
      this.list.push({ path, oid, size: data.length, executable: false });
    }
  }

  async files(_commit: string, dir: string): Promise<TreeFile[]> {
    return dir ? this.list.filter((f) => f.path.startsWith(`${dir.replace(/\/$/, '')}/`)) : [...this.list];
  }

  async blobs(oids: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    for (const oid of oids) {
      const data = this.byOid.get(oid);
      if (data) out.set(oid, data);
    }
    return out;
  }

  get size(): number {
    return this.list.length;
  }
}
