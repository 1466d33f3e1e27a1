/**
 * `npm run check:layers`: the import graph of src/ keeps its layers.
 *
 * - `src/platform/` (the bottom layer) imports no area folder.
 * - The area folders (src/<area>/) import each other without circles: a circle means two areas
 *   cannot be understood, tested or changed apart. Circles that existed when this check was added
 *   are listed in scripts/layers-known-circles.json while they are being taken apart; a circle that
 *   is not within one of those fails, and so does a listed one that no longer exists (shrink the
 *   list as circles go, so they cannot come back).
 *
 * Type-only imports count: they tie the areas' shapes together just the same.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const src = join(root, 'src');
const knownPath = join(root, 'scripts/layers-known-circles.json');

type Edge = { from: string; to: string };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/** Relative module specifiers of static imports, re-exports and dynamic imports. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) found.push(m[1]!);
  return found;
}

/** The folder of src/ a file belongs to ('' for files directly in src/: the top, which may import anything). */
function areaOf(file: string): string {
  const parts = relative(src, file).split('/');
  return parts.length > 1 ? parts[0]! : '';
}

const edges: Edge[] = [];
for (const file of sourceFiles(src)) {
  const from = areaOf(file);
  for (const spec of specifiers(readFileSync(file, 'utf8'))) {
    const target = normalize(join(dirname(file), spec));
    if (!target.startsWith(src + '/')) continue;
    const to = areaOf(target);
    if (from && to && from !== to) edges.push({ from: `${relative(root, file)}`, to: `${relative(root, target)}` });
  }
}
const area = (path: string) => path.split('/')[1]!;

const problems: string[] = [];

const upward = edges.filter((e) => area(e.from) === 'platform');
for (const e of upward) problems.push(`platform imports an area: ${e.from} -> ${e.to}`);

// Strongly connected components of the area graph (Tarjan).
const graph = new Map<string, Set<string>>();
for (const e of edges) {
  if (area(e.from) === 'platform' || area(e.to) === 'platform') continue;
  if (!graph.has(area(e.from))) graph.set(area(e.from), new Set());
  graph.get(area(e.from))!.add(area(e.to));
}
const index = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
const components: string[][] = [];
let counter = 0;
function connect(v: string): void {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
  }
  if (low.get(v) === index.get(v)) {
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) components.push(component.sort());
  }
}
for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);

const known: string[][] = JSON.parse(readFileSync(knownPath, 'utf8')).circles;
for (const circle of components) {
  const within = known.some((k) => circle.every((a) => k.includes(a)));
  const members = new Set(circle);
  const sample = edges.filter((e) => members.has(area(e.from)) && members.has(area(e.to))).slice(0, 4).map((e) => `${e.from} -> ${e.to}`);
  if (!within) problems.push(`a new import circle among {${circle.join(', ')}}, e.g. ${sample.join('; ')}`);
  else console.log(`known circle (being taken apart): {${circle.join(', ')}}`);
}
for (const k of known) {
  if (!components.some((c) => c.every((a) => k.includes(a)) && k.every((a) => c.includes(a)))) {
    problems.push(`scripts/layers-known-circles.json lists {${k.join(', ')}}, which is no longer exactly a circle: update the list to what is left (${components.map((c) => `{${c.join(', ')}}`).join(' ') || 'nothing'})`);
  }
}

if (problems.length) {
  for (const p of problems) console.error(`error: ${p}`);
  process.exit(1);
}
console.log(`layers: platform imports no area; ${components.length} known circle(s), no new one (${edges.length} imports between folders)`);
