import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../src/index.js';

/**
 * The repository stands alone: a user has only a clone of it, with no folder
 * beside it. This clones the committed HEAD into an empty temporary folder
 * (so anything still uncommitted is not part of the check), installs from
 * the lockfile, and runs a fast subset there: the type check of
 * shared/testing, the fake nvidia-smi over the H200 captures kept in the
 * repository, and the contracts tests (the Redocly lint among them). It also
 * holds every tracked file to two rules: nothing names the build handout
 * beside the checkout, and every relative link in a Markdown file points at
 * a file of the repository.
 */

const run = promisify(execFile);
const source = repoRoot();
const parent = mkdtempSync(join(tmpdir(), 'vouch-standalone-'));
const clone = join(parent, 'vouch');
// The commands below inherit npm's per-run variables when the suite runs under `npm test`; none points into the source checkout's files.
const env = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

const NICE = ['/usr/bin/nice', '/bin/nice'].some((p) => existsSync(p));

/**
 * Runs a command in the clone at a low CPU priority where `nice` exists: the
 * install and the inner test run share the machine with the rest of the
 * suite, whose crash tests wait on real processes and must not be starved.
 */
async function inClone(file: string, args: string[], timeoutMs: number): Promise<string> {
  const [command, argv] = NICE ? ['nice', ['-n', '10', file, ...args]] : [file, args];
  try {
    const { stdout, stderr } = await run(command, argv, { cwd: clone, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    // eslint-disable-next-line no-control-regex
    return (stdout + stderr).replace(/\x1b\[[0-9;]*m/g, '');
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${[file, ...args].join(' ')} failed in the clone: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`.slice(0, 20_000), { cause: err });
  }
}

const node = (script: string, args: string[], timeoutMs: number) => inClone(process.execPath, [join(clone, script), ...args], timeoutMs);

async function tracked(): Promise<string[]> {
  return (await inClone('git', ['ls-files', '-z'], 30_000)).split('\0').filter(Boolean);
}

beforeAll(async () => {
  if (!existsSync(join(source, '.git'))) throw new Error(`${source} is not a git checkout: this test clones the committed HEAD`);
  await run('git', ['clone', '--quiet', '--no-hardlinks', source, clone], { timeout: 60_000 });
  // Offline from the npm cache when it holds every package (CI's own `npm ci` has just filled it); the registry otherwise.
  try {
    await inClone('npm', ['ci', '--offline', '--no-audit', '--no-fund'], 240_000);
  } catch {
    await inClone('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], 300_000);
  }
}, 600_000);

// Asynchronous and unhurried: a synchronous delete of the clone's node_modules blocked the worker past the hook timeout on a loaded machine.
afterAll(() => rm(parent, { recursive: true, force: true, maxRetries: 3 }), 300_000);

describe('a clone of the repository, with nothing beside it', () => {
  it('has no folder beside it', () => {
    expect(existsSync(join(parent, 'shared'))).toBe(false);
  });

  it('type-checks shared/testing', async () => {
    await node('node_modules/typescript/bin/tsc', ['-p', 'shared/testing/tsconfig.json', '--noEmit'], 240_000);
  }, 300_000);

  it('passes the fake nvidia-smi and contracts tests', async () => {
    const out = await node('node_modules/vitest/vitest.mjs', ['run', '--maxWorkers=1', 'shared/testing/test/fake-nvidia-smi.test.ts', 'shared/contracts/test'], 240_000);
    // Every test ran and passed: "Tests  29 passed (29)", with no "| 1 skipped" between.
    const [, passed, total] = /Tests\s+(\d+) passed \((\d+)\)/.exec(out) ?? [];
    expect(Number(passed), out).toBeGreaterThan(0);
    expect(passed).toBe(total);
  }, 300_000);

  it('has no tracked file that points at the build handout beside the checkout', async () => {
    // Written so that it does not match itself.
    const pattern = String.raw`\.\./shared\b|/wor[k]/shared\b`;
    // git grep exits 1 when nothing matches: that is the pass.
    const found = await run('git', ['grep', '-n', '-I', '-E', pattern], { cwd: clone }).then(
      (r) => r.stdout.trim(),
      (err: { code?: number; stdout?: string }) => (err.code === 1 ? '' : `git grep failed: ${String(err.stdout)}`),
    );
    expect(found).toBe('');
  });

  it('links only to files of the repository from its Markdown', async () => {
    const files = await tracked();
    const present = new Set(files.map((f) => normalize(f)));
    const folders = new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    const broken: string[] = [];
    for (const file of files.filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(join(clone, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        if (/^(?:[a-z]+:|#)/i.test(target!)) continue;
        const path = normalize(join(dirname(file), target!.split('#')[0]!));
        const inside = path !== '..' && !path.startsWith(`..${sep}`);
        if (!inside || !(present.has(path) || folders.has(path.replace(/\/$/, '')))) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
