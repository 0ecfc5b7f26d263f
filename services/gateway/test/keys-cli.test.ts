import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SCOPES } from '@vouch/contracts';
import { repoRoot } from '@vouch/testing';

const KEYS_CLI = fileURLToPath(new URL('../src/cli/keys.ts', import.meta.url));
const keys = (env: Record<string, string>, ...args: string[]) =>
  spawnSync(process.execPath, ['--conditions=@vouch/source', '--import', 'tsx', KEYS_CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });

describe('npm run keys, as the README writes it', () => {
  it('needs no DATABASE_URL: it falls back to the local stack\'s Postgres, as scripts/up.sh does', () => {
    // A bad DB_SCHEMA stops it before it connects; the message names only what is wrong.
    const r = keys({ DATABASE_URL: '', DB_SCHEMA: 'Not A Schema' }, 'list');
    expect(r.stderr).toContain('keys: invalid configuration (1 variable):\n  DB_SCHEMA');
    expect(r.status).toBe(78);
  });

  it('names every scope a key can hold, in the README\'s list of them', () => {
    const readme = readFileSync(join(repoRoot(), 'README.md'), 'utf8');
    const listed = /tenant and scopes \(`([^`]+)`\)/.exec(readme)?.[1]?.split(' ');
    expect(listed).toEqual([...SCOPES]);
  });

  it('says where it looked for Postgres and how to start it when nothing answers there', () => {
    const r = keys({ DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/postgres' }, 'list');
    // One line naming the variable, the password hidden, and the way out; the config exit code, as every process.
    expect(r.stderr).toMatch(/^keys: cannot start: Postgres at DATABASE_URL=postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/postgres refused the connection: .+; start the stack with \.\/scripts\/up\.sh, or set DATABASE_URL\n$/);
    expect(r.status).toBe(78);
  });
});
