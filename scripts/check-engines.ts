/**
 * Checks that package.json's `engines.node` is the Node.js range the installed dependencies need:
 *
 * - every package in package-lock.json that declares `engines.node` accepts every version our
 *   range admits (else `npm ci` prints EBADENGINE on some version we claim to support);
 * - our range starts at the highest minimum among them (it claims no more than they need);
 * - the Node.js running this script is within it.
 *
 * Prints what to declare when it fails. Run by .ci/run and `npm run check:engines`.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
const declared: string | undefined = pkg.engines?.node;

const problems: string[] = [];
let needed = new semver.SemVer('0.0.0');
let neededBy = '(nothing)';
for (const [path, entry] of Object.entries<{ version?: string; engines?: { node?: string } | string[] }>(lock.packages ?? {})) {
  if (path === '' || !entry.engines || Array.isArray(entry.engines) || !entry.engines.node) continue;
  const name = `${path.replace(/^.*node_modules\//, '')}@${entry.version ?? '?'}`;
  const range = entry.engines.node;
  if (!semver.validRange(range)) {
    problems.push(`${name} declares an engines.node range semver cannot read: "${range}"`);
    continue;
  }
  const min = semver.minVersion(range);
  if (min && semver.gt(min, needed)) {
    needed = min;
    neededBy = `${name} (${range})`;
  }
  if (declared && semver.validRange(declared) && !semver.subset(declared, range)) {
    problems.push(`${name} needs node ${range}, but package.json admits versions outside it (${declared})`);
  }
}

if (!declared || !semver.validRange(declared)) {
  problems.push(`package.json has no valid engines.node (got ${JSON.stringify(declared)})`);
} else {
  const declaredMin = semver.minVersion(declared);
  if (declaredMin && !semver.eq(declaredMin, needed)) {
    problems.push(`package.json's engines.node starts at ${declaredMin.version}, but the dependencies need ${needed.version} at least (${neededBy})`);
  }
  if (!semver.satisfies(process.version, declared)) {
    problems.push(`this Node.js (${process.version}) is outside package.json's engines.node (${declared})`);
  }
}

if (problems.length > 0) {
  console.error(`engines check failed:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log(`engines.node "${declared}" matches the dependencies (highest minimum: ${needed.version}, from ${neededBy}); running ${process.version}`);
