import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, commonEnvSchema, parseConfig, portVar, redactHost, redactUrl } from '../src/config.js';

const schema = commonEnvSchema.extend({ HTTP_PORT: portVar(9104) });

describe('parseConfig', () => {
  it('fills defaults from a minimal environment', () => {
    const cfg = parseConfig(schema, { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://postgres@127.0.0.1/test' });
    expect(cfg).toMatchObject({ BULLMQ_PREFIX: 'vouch', LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: 25_000, HTTP_PORT: 9104 });
  });

  it('names every offending variable in one error', () => {
    let error: unknown;
    try {
      parseConfig(schema, { DATABASE_URL: 'not a url', LOG_LEVEL: 'loud', HTTP_PORT: '70000' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const cfgError = error as ConfigError;
    expect(cfgError.variables.sort()).toEqual(['DATABASE_URL', 'HTTP_PORT', 'LOG_LEVEL', 'REDIS_URL']);
    expect(cfgError.message).toContain('REDIS_URL is required: set it to the Redis URL, e.g. redis://127.0.0.1:6379');
    expect(cfgError.message).toContain('DATABASE_URL must be a Postgres URL');
  });

  it('treats an empty variable as unset', () => {
    const cfg = parseConfig(schema.extend({ OPTIONAL: z.string().optional() }), { REDIS_URL: 'redis://h:1', DATABASE_URL: 'postgres://h/db', OPTIONAL: '' });
    expect(cfg.OPTIONAL).toBeUndefined();
  });

  it('redacts passwords from URLs for logs', () => {
    expect(redactUrl('postgres://app:s3cret@db:5432/vouch')).toBe('postgres://app:***@db:5432/vouch');
  });

  it('names a host for logs without its password or the slash URL parsing adds', () => {
    expect(redactHost('http://ollama:s3cret@gpu-1:11434')).toBe('http://ollama:***@gpu-1:11434');
    expect(redactHost('http://gpu-1:11434/')).toBe('http://gpu-1:11434');
    expect(redactHost('https://gpu-1/ollama/')).toBe('https://gpu-1/ollama');
    expect(redactHost('not a url')).toBe('(unparseable url)');
  });
});
