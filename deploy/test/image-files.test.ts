// deploy/image-files.mjs decides what a runtime image holds (deploy/Dockerfile,
// stage image-files): the service's and its shared packages' built files, and
// the third-party packages they need at run time, nothing else. Checked on a
// small installed tree made here, and on this repository's own node_modules.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { imageFiles } from '../image-files.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(join(tmpdir(), 'vouch-image-files-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
const pkg = (dir: string, manifest: Record<string, unknown>) => write(join(dir, 'package.json'), JSON.stringify(manifest));

/** A workspace as npm installs it: a service, a shared package it uses, a test helper it only develops with. */
function tree(opts: { installB?: boolean } = {}) {
  const t = mkdtempSync(join(work, 'tree-'));
  pkg(join(t, 'services/svc'), { name: '@vouch/svc', dependencies: { a: '1', '@vouch/lib': '0.1.0' }, devDependencies: { '@vouch/helper': '0.1.0', vitest: '4' } });
  for (const f of ['dist/main.js', 'src/main.ts', 'test/main.test.ts', 'migrations/001.sql']) write(join(t, 'services/svc', f), '');
  pkg(join(t, 'shared/lib'), { name: '@vouch/lib', dependencies: { b: '1' } });
  for (const f of ['dist/index.js', 'src/index.ts', 'test/index.test.ts']) write(join(t, 'shared/lib', f), '');
  pkg(join(t, 'shared/helper'), { name: '@vouch/helper', dependencies: { heavy: '1' } });
  pkg(join(t, 'node_modules/a'), { name: 'a', dependencies: { c: '2' }, optionalDependencies: { 'a-native-linux': '1', 'a-native-darwin': '1' } });
  pkg(join(t, 'node_modules/a/node_modules/c'), { name: 'c' });
  pkg(join(t, 'node_modules/c'), { name: 'c' });
  pkg(join(t, 'node_modules/a-native-linux'), { name: 'a-native-linux' });
  if (opts.installB ?? true) pkg(join(t, 'node_modules/b'), { name: 'b', peerDependencies: { a: '1' } });
  pkg(join(t, 'node_modules/heavy'), { name: 'heavy' });
  pkg(join(t, 'node_modules/vitest'), { name: 'vitest' });
  mkdirSync(join(t, 'node_modules/@vouch'), { recursive: true });
  // Relative links, as npm makes them (node_modules/@vouch/lib -> the workspace folder).
  const link = (to: string, name: string) => symlinkSync(relative(join(t, 'node_modules/@vouch'), join(t, to)), join(t, 'node_modules/@vouch', name));
  link('shared/lib', 'lib');
  link('shared/helper', 'helper');
  link('services/svc', 'svc');
  return t;
}

describe('image-files.mjs', () => {
  it("lists the service's built files, its shared packages' and its run-time dependencies, nothing else", () => {
    const t = tree();
    expect(imageFiles(t, 'services/svc').paths).toEqual([
      'node_modules/@vouch/lib',
      'node_modules/a', // with a's own node_modules/c, the c it resolves
      'node_modules/a-native-linux', // an optional dependency npm installed; a-native-darwin it did not
      'node_modules/b',
      'services/svc/dist',
      'services/svc/migrations',
      'services/svc/package.json',
      'shared/lib/dist',
      'shared/lib/package.json',
    ]);
  });

  it("follows a workspace package's `files` instead of dist/ and migrations/", () => {
    const t = tree();
    pkg(join(t, 'shared/lib'), { name: '@vouch/lib', dependencies: { b: '1' }, files: ['dist', 'data'] });
    write(join(t, 'shared/lib/data/words.txt'), 'x');
    expect(imageFiles(t, 'services/svc').paths.filter((p) => p.startsWith('shared/'))).toEqual(['shared/lib/data', 'shared/lib/dist', 'shared/lib/package.json']);
  });

  it('refuses a tree where a run-time dependency is missing, naming it', () => {
    expect(() => imageFiles(tree({ installB: false }), 'services/svc')).toThrow(/@vouch\/lib depends on b, which is not installed/);
  });

  it('CLI: refuses a service that was not built', () => {
    const t = tree();
    rmSync(join(t, 'services/svc/dist'), { recursive: true });
    const r = spawnSyncNode([join(root, 'deploy/image-files.mjs'), 'services/svc'], t);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/services\/svc\/dist\/main\.js is missing/);
  });

  const services = ['gateway', 'ledger-critic', 'extractor', 'vision-router', 'board-dispatcher'].filter((s) => existsSync(join(root, 'services', s, 'package.json')));
  it.each(services)('%s: ships its production dependencies from this repository, no sources, tests or dev tools', (svc) => {
    const { paths } = imageFiles(root, `services/${svc}`);
    const manifest = JSON.parse(readFileSync(join(root, 'services', svc, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    // Hoisted to the root node_modules, or nested under the service where versions differ.
    for (const dep of Object.keys(manifest.dependencies ?? {})) expect([`node_modules/${dep}`, `services/${svc}/node_modules/${dep}`].filter((p) => paths.includes(p)), dep).toHaveLength(1);
    expect(paths).toContain(`services/${svc}/package.json`);
    if (existsSync(join(root, 'services', svc, 'migrations'))) expect(paths).toContain(`services/${svc}/migrations`);
    const workspaceFiles = paths.filter((p) => /^(services|shared)\//.test(p));
    expect(workspaceFiles.filter((p) => /\/(src|test|fixtures)(\/|$)/.test(p) && !p.includes('/node_modules/'))).toEqual([]);
    for (const dev of ['vitest', 'typescript', 'eslint', 'turbo', '@vouch/testing', 'fast-check']) expect(paths, dev).not.toContain(`node_modules/${dev}`);
    expect(paths.some((p) => p.startsWith('shared/testing'))).toBe(false);
    expect(paths.some((p) => p.startsWith('services/') && !p.startsWith(`services/${svc}/`))).toBe(false);
  });
});

function spawnSyncNode(args: string[], cwd: string) {
  return spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
}
