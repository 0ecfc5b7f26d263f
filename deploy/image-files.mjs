// What one service's runtime image holds: the service's own built files and,
// by Node's module resolution from the service outward, every package it
// needs at run time (its dependencies, theirs, and so on) and nothing else.
// deploy/Dockerfile runs it in the stage that assembles the image:
//
//   node image-files.mjs services/extractor > list && tar -cf - -T list | tar -xf - -C /image
//
// Workspace packages (services/*, shared/*) contribute their package.json and
// the files their `files` field names (dist/ and migrations/ by default), never
// src/ or test/. A devDependency is never followed, so test helpers
// (@vouch/testing) and build tools stay out even where npm installed them.
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a workspace package ships when its package.json has no `files`. */
const WORKSPACE_FILES = ['dist', 'migrations'];

/**
 * @param {string} dir
 * @returns {{ name?: string, files?: string[], dependencies?: Record<string, string>, optionalDependencies?: Record<string, string>, peerDependencies?: Record<string, string>, peerDependenciesMeta?: Record<string, { optional?: boolean }> }}
 */
function manifest(dir) {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
}

/**
 * Where `name` resolves from a package in `fromDir`: the nearest
 * node_modules/<name> on the way up to `root`, as Node finds it.
 * @param {string} root
 * @param {string} fromDir
 * @param {string} name
 * @returns {string | undefined}
 */
function locate(root, fromDir, name) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || !dir.startsWith(root)) return undefined;
  }
}

/**
 * The paths (relative to `root`) a runtime image of `service` needs: the
 * workspace packages' shipped files, third-party package folders, and the
 * node_modules links that lead to workspace packages.
 * @param {string} root  the folder holding the root node_modules (the repository, or /app in the image)
 * @param {string} service  the service's folder relative to root, e.g. services/extractor
 * @returns {{ packages: string[], paths: string[] }}  packages: the names reached, the service first
 */
export function imageFiles(root, service) {
  const top = realpathSync(resolve(root));
  const start = realpathSync(resolve(top, service));
  /** @type {Set<string>} */
  const paths = new Set();
  /** @type {Map<string, string>} realpath -> package name */
  const seen = new Map();
  /** @type {string[]} */
  const queue = [start];
  const rel = (/** @type {string} */ p) => relative(top, p);

  while (queue.length > 0) {
    const dir = /** @type {string} */ (queue.shift());
    if (seen.has(dir)) continue;
    const pkg = manifest(dir);
    seen.set(dir, pkg.name ?? rel(dir));
    const isWorkspace = !rel(dir).split(sep).includes('node_modules');
    if (isWorkspace) {
      paths.add(join(rel(dir), 'package.json'));
      for (const f of pkg.files ?? WORKSPACE_FILES) if (existsSync(join(dir, f))) paths.add(join(rel(dir), f));
    } else {
      paths.add(rel(dir));
    }

    const wanted = [
      ...Object.keys(pkg.dependencies ?? {}).map((name) => ({ name, required: true })),
      ...Object.keys(pkg.optionalDependencies ?? {}).map((name) => ({ name, required: false })),
      // npm installs the peers a package requires; optional peers (a type checker, an
      // alternative back end) are the application's choice, and the services make none.
      ...Object.keys(pkg.peerDependencies ?? {})
        .filter((name) => !pkg.peerDependenciesMeta?.[name]?.optional)
        .map((name) => ({ name, required: false })),
    ];
    for (const { name, required } of wanted) {
      const found = locate(top, dir, name);
      if (!found) {
        if (required) throw new Error(`${pkg.name ?? rel(dir)} depends on ${name}, which is not installed under ${top}: run npm ci --omit=dev --workspace ${service} first`);
        continue;
      }
      if (lstatSync(found).isSymbolicLink()) paths.add(rel(found));
      queue.push(realpathSync(found));
    }
  }

  // A folder already listed carries everything under it (nested node_modules included).
  const sorted = [...paths].sort();
  const kept = sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(q + sep) && !lstatSync(join(top, q)).isSymbolicLink()));
  return { packages: [...seen.values()], paths: kept };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const service = process.argv[2];
  if (!service) {
    console.error('usage: node image-files.mjs services/<name>   (run in the folder holding node_modules)');
    process.exit(2);
  }
  if (!existsSync(join(service, 'dist', 'main.js'))) {
    console.error(`${service}/dist/main.js is missing: build arg SERVICE must name a built service under services/`);
    process.exit(1);
  }
  process.stdout.write(`${imageFiles(process.cwd(), service).paths.join('\n')}\n`);
}
