import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@vouch/testing';
import { LOCAL_STACK, withLocalStack } from '../src/index.js';

const root = repoRoot();

describe('the local stack defaults', () => {
  it('fill REDIS_URL and DATABASE_URL where they are unset or empty, and keep what is set', () => {
    expect(withLocalStack({ LOG_LEVEL: 'warn', DATABASE_URL: '' })).toEqual({ LOG_LEVEL: 'warn', ...LOCAL_STACK });
    expect(withLocalStack({ REDIS_URL: 'redis://cache:6379', DATABASE_URL: 'postgres://db/x' })).toEqual({ REDIS_URL: 'redis://cache:6379', DATABASE_URL: 'postgres://db/x' });
  });

  it('are the ones scripts/up.sh uses and the README names', () => {
    const up = readFileSync(join(root, 'scripts/up.sh'), 'utf8');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const [name, value] of Object.entries(LOCAL_STACK)) {
      expect(up).toContain(`export ${name}="\${${name}:-${value}}"`);
      expect(readme).toContain(`\`${name}=${value}\``);
    }
  });

  it('let `npm run migrate` run without DATABASE_URL', () => {
    // A bad LOG_LEVEL stops it before it connects; the message names only what is wrong.
    const env = { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'loud' };
    const r = spawnSync(process.execPath, ['--conditions=@vouch/source', '--import', 'tsx', join(root, 'scripts/migrate.ts')], { env, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toContain('migrate: invalid configuration (1 variable):\n  LOG_LEVEL');
    expect(r.status).toBe(78);
  });
});
