import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The project's directory, for the few files Folio reads beside its code at run time: package.json,
 * the app's build, the worker threads' entry modules, the sandbox's wrapper script.
 *
 * Found by walking up from this module rather than by a path relative to it: `bin/folio` runs the
 * sources, or the bundle it builds from them (build/server/, see scripts/bundles.mjs), and the
 * two sit at different depths.
 */
export const PROJECT_ROOT = (() => {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no project directory (package.json beside src/) above ${start}`);
  }
})();

/** A path inside the project, from its directory: `projectPath('app/dist')`. */
export const projectPath = (relative: string): string => join(PROJECT_ROOT, relative);

/** The same as a file: URL (worker threads take their entry module as one). */
export const projectUrl = (relative: string): string => pathToFileURL(projectPath(relative)).href;
