import { describe, expect, it } from 'vitest';
import { mediaBase64MaxLength } from '@vouch/contracts';
import { parseConfig } from '@vouch/platform';
import { ByteBudget } from '../src/body-budget.js';
import { bodyLimitFor, gatewayEnvSchema, tenantBodyShare } from '../src/config.js';

describe('ByteBudget', () => {
  it('takes bytes while they fit and gives them back', () => {
    const budget = new ByteBudget(100);
    expect(budget.tryTake(60)).toBe(true);
    expect(budget.tryTake(41)).toBe(false);
    expect(budget.tryTake(40)).toBe(true);
    expect(budget.held).toBe(100);
    budget.give(60);
    expect(budget.tryTake(60)).toBe(true);
    expect(budget.held).toBe(100);
  });
});

describe('upload configuration', () => {
  const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };

  it('leaves room in the body for line-wrapped base64 of the largest image', () => {
    const config = parseConfig(gatewayEnvSchema, env);
    const digits = Math.ceil(config.MEDIA_MAX_BYTES / 3) * 4;
    // A CRLF every 64 characters, escaped in JSON as four characters.
    expect(bodyLimitFor(config)).toBeGreaterThan(digits + (digits / 64) * 4 + 1024);
    expect(mediaBase64MaxLength(config.MEDIA_MAX_BYTES)).toBeGreaterThan(digits + (digits / 64) * 2);
    expect(config.BODY_BUDGET_BYTES).toBeGreaterThanOrEqual(bodyLimitFor(config));
  });

  it('refuses a body budget that could never admit the largest image, naming the variable', () => {
    const largest = bodyLimitFor({ MEDIA_MAX_BYTES: 10 * 1024 * 1024 });
    expect(() => parseConfig(gatewayEnvSchema, { ...env, BODY_BUDGET_BYTES: String(largest - 1) })).toThrow(/BODY_BUDGET_BYTES.*must be at least the largest body/);
    expect(parseConfig(gatewayEnvSchema, { ...env, BODY_BUDGET_BYTES: String(largest) }).BODY_BUDGET_BYTES).toBe(largest);
  });

  it("gives each tenant a quarter of the body budget, at least the largest body, and refuses a share past the budget or below the largest body", () => {
    const largest = bodyLimitFor({ MEDIA_MAX_BYTES: 10 * 1024 * 1024 });
    expect(tenantBodyShare(parseConfig(gatewayEnvSchema, env))).toBe(16 * 1024 * 1024);
    expect(tenantBodyShare(parseConfig(gatewayEnvSchema, { ...env, BODY_BUDGET_BYTES: String(2 * largest) }))).toBe(largest);
    expect(tenantBodyShare(parseConfig(gatewayEnvSchema, { ...env, BODY_BUDGET_BYTES: String(largest) }))).toBe(largest);
    expect(tenantBodyShare(parseConfig(gatewayEnvSchema, { ...env, BODY_BUDGET_TENANT_BYTES: String(20 * 1024 * 1024) }))).toBe(20 * 1024 * 1024);
    expect(() => parseConfig(gatewayEnvSchema, { ...env, BODY_BUDGET_TENANT_BYTES: String(largest - 1) })).toThrow(/BODY_BUDGET_TENANT_BYTES.*must be at least the largest body/);
    expect(() => parseConfig(gatewayEnvSchema, { ...env, BODY_BUDGET_BYTES: String(largest), BODY_BUDGET_TENANT_BYTES: String(largest + 1) })).toThrow(/BODY_BUDGET_TENANT_BYTES must be at most BODY_BUDGET_BYTES/);
  });
});
