import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root: the nearest directory above this file whose
 * package.json is named `vouch`. Found by walking up, so it works from `src/`
 * under vitest and from `dist/` after a build, wherever the checkout lives.
 */
export function repoRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (readPackageName(join(dir, 'package.json')) === 'vouch') return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json named "vouch" above ${start}`);
  }
}

function readPackageName(path: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && 'name' in parsed && typeof parsed.name === 'string' ? parsed.name : undefined;
  } catch {
    return undefined;
  }
}

/** Fixtures the tests read, kept in the repository: `shared/testing/fixtures`. */
export function fixturesDir(): string {
  return join(repoRoot(), 'shared', 'testing', 'fixtures');
}
