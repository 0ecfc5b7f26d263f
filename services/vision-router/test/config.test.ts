import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '@vouch/platform';
import { DEFAULT_OCR_WORKERS, visionRouterEnvSchema } from '../src/config.js';

const BASE = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };

describe('vision-router configuration', () => {
  it('has defaults for everything but the connections', () => {
    expect(parseConfig(visionRouterEnvSchema, BASE)).toMatchObject({
      HTTP_PORT: 9101,
      WORKER_CONCURRENCY: DEFAULT_OCR_WORKERS,
      OCR_WORKERS: DEFAULT_OCR_WORKERS,
      GATEWAY_DB_SCHEMA: 'gateway',
      VISION_MAX_PIXELS: 40_000_000,
      OCR_RECYCLE_AFTER: 200,
      OCR_RECYCLE_ABOVE_PIXELS: 4_000_000,
      OCR_RECYCLE_IDLE_MS: 2_000,
      VISION_MODEL: 'moondream',
      LOCK_DURATION_MS: 60_000,
    });
    expect(parseConfig(visionRouterEnvSchema, BASE).OLLAMA_HOST).toBeUndefined();
  });

  it('refuses bad values, naming every variable and the way out', () => {
    try {
      parseConfig(visionRouterEnvSchema, { ...BASE, OLLAMA_HOST: 'gpu-box', GATEWAY_DB_SCHEMA: 'Gateway;drop', OCR_WORKERS: '0' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variables.sort()).toEqual(['GATEWAY_DB_SCHEMA', 'OCR_WORKERS', 'OLLAMA_HOST']);
      expect((err as ConfigError).message).toContain('OLLAMA_HOST must be the Ollama base URL with scheme and port');
    }
  });
});
