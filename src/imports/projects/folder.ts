import { folderNav, type Project, type SourceTree } from './nav.ts';

/** A plain Markdown folder: folders become groups (top level) or pages, README.md/index.md the folder's page. */
export function folderProject(files: SourceTree, dir: string): Project {
  return { kind: 'folder', dialect: 'plain', docsDir: dir, rootDir: dir, nav: folderNav(files, dir, 0) };
}
