import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, commonEnvSchema, parseConfig, portVar, redactHost, redactUrl } from '../src/config.js';
import { consumerRedisOptions, describeRedisTarget, redisOptions, redisTarget } from '../src/redis.js';

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

describe('Redis through Sentinel (REDIS_SENTINELS)', () => {
  const base = { REDIS_URL: 'redis://:nodepw@ignored:6379/2', DATABASE_URL: 'postgres://h/db' };

  it('parses the sentinel list, with the group name defaulting to mymaster', () => {
    const cfg = parseConfig(schema, { ...base, REDIS_SENTINELS: ' s1:26379, 10.0.0.2:26380,[::1]:26381 ', REDIS_SENTINEL_PASSWORD: 'sentpw' });
    expect(cfg.REDIS_SENTINELS).toEqual([
      { host: 's1', port: 26379 },
      { host: '10.0.0.2', port: 26380 },
      { host: '::1', port: 26381 },
    ]);
    expect(redisTarget(cfg)).toEqual({ url: base.REDIS_URL, sentinel: { sentinels: cfg.REDIS_SENTINELS, name: 'mymaster', password: 'sentpw' } });
  });

  it('is the plain URL when unset', () => {
    expect(redisTarget(parseConfig(schema, base))).toBe(base.REDIS_URL);
  });

  it('names the variable and the way out for a bad list or group name', () => {
    expect(() => parseConfig(schema, { ...base, REDIS_SENTINELS: 's1:26379,s2' })).toThrow(
      /REDIS_SENTINELS must be a comma-separated list of sentinel host:port pairs, e.g\. .*unset it to connect to REDIS_URL directly.*"s2" is not one/,
    );
    expect(() => parseConfig(schema, { ...base, REDIS_SENTINELS: 's1:70000' })).toThrow(/REDIS_SENTINELS must be/);
    expect(() => parseConfig(schema, { ...base, REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'my master' })).toThrow(/REDIS_SENTINEL_NAME must be the master group name/);
  });

  it('gives ioredis the sentinels, the group and the nodes’ credentials, not the URL’s host', () => {
    const target = redisTarget(parseConfig(schema, { ...base, REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'vouch' }));
    const producer = redisOptions(target);
    expect(producer).toMatchObject({ sentinels: [{ host: 's1', port: 26379 }], name: 'vouch', role: 'master', password: 'nodepw', db: 2, failoverDetector: true });
    expect(producer).not.toHaveProperty('host');
    expect(producer).not.toHaveProperty('sentinelPassword');
    const consumer = consumerRedisOptions(target, 'x');
    expect(consumer).toMatchObject({ sentinels: [{ host: 's1', port: 26379 }], name: 'vouch', maxRetriesPerRequest: null, connectionName: 'x' });
    // A primary demoted under a live connection answers READONLY: reconnect (and ask the sentinels again), resending a consumer's command.
    expect(consumer.reconnectOnError?.(new Error("READONLY You can't write against a read only replica."))).toBe(2);
    expect(consumer.reconnectOnError?.(new Error('ERR unknown command'))).toBe(false);
    expect(describeRedisTarget(target)).toBe('master group vouch through sentinels s1:26379');
    expect(redisOptions(redisTarget(parseConfig(schema, { ...base, REDIS_URL: 'rediss://h:1', REDIS_SENTINELS: 's1:26379' })))).toMatchObject({ tls: {}, enableTLSForSentinelMode: true });
  });
});
