import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

describe('the gateway process', () => {
  it('refuses to start on bad configuration, naming every offending variable, before connecting to anything', () => {
    const env = { ...process.env, REDIS_URL: '', DATABASE_URL: 'not-a-url', PORT: 'eighty', LOG_LEVEL: 'loud' };
    const r = spawnSync(process.execPath, ['--conditions=@vouch/source', '--import', 'tsx', MAIN], { env, encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('gateway: invalid configuration (4 variables):');
    for (const name of ['REDIS_URL is required', 'DATABASE_URL must be a Postgres URL', 'PORT', 'LOG_LEVEL']) expect(r.stderr).toContain(name);
  });
});
