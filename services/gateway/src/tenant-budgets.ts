import { ERROR_CODES, VouchError } from '@vouch/contracts';
import type { Redis } from 'ioredis';
import { Counter, type Registry } from 'prom-client';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Caller } from './api-keys.js';
import { TenantInflight, type InflightSlot } from './tenant-inflight.js';

/**
 * Every tenant's two budgets, checked before an operation runs or is queued
 * (docs/architecture.md, "Costs and budgets"), in Redis so that every gateway
 * replica counts the same:
 *
 * - **rate**: cost units (operation-costs.ts) per window. A fixed window per
 *   tenant, as rate-limiter-flexible's RateLimiterRedis keeps it (one atomic
 *   script per charge): the window starts at the tenant's first charge and its
 *   budget comes back whole when it ends, so a refusal knows exactly when to
 *   retry.
 * - **concurrency**: operations of the tenant in flight at once
 *   (tenant-inflight.ts).
 *
 * The limits are the gateway's defaults or the calling key's overrides; the
 * counters are the tenant's, whichever of its keys calls.
 */

/** Seconds a concurrency refusal asks the caller to wait: a slot frees when one of the tenant's operations ends, which no one can foresee. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

/**
 * rate-limiter-flexible's increment script, changed to charge only what fits:
 * its own adds the cost even to a refused call, so a tenant retrying a call
 * that can never fit would keep its counter past the limit, and a refused
 * call would stand in the way of a cheaper one that fits. ARGV as the library
 * passes them: cost, window seconds, limit. Every limiter on one Redis client
 * shares one script (the library defines it as the client's `rlflxIncr`
 * command), so every limiter made here passes this one.
 */
const CHARGE_IF_IT_FITS = `
redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local cost = tonumber(ARGV[1])
local consumed = tonumber(redis.call('get', KEYS[1]))
if cost <= 0 or consumed + cost <= tonumber(ARGV[3]) then
  consumed = redis.call('incrby', KEYS[1], cost)
else
  consumed = consumed + cost
end
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[2])
  ttl = 1000 * ARGV[2]
end
return {consumed, ttl}
`;

export interface BudgetDefaults {
  /** Cost units per window (TENANT_RATE_BUDGET). */
  rate: number;
  /** The window, in seconds (TENANT_RATE_WINDOW_SECONDS). */
  windowSeconds: number;
  /** Operations in flight (TENANT_CONCURRENCY_BUDGET). */
  concurrency: number;
}

/** An admitted operation: charge what its answer adds, and free its slot once it has ended. */
export interface Admission {
  /** Adds units only the answer told (a grep's scan); never refused. */
  charge(units: number): Promise<void>;
  /** Frees the concurrency slot; call it on every outcome. Safe to call twice. */
  release(): Promise<void>;
}

const UNCHECKED: Admission = { charge: async () => {}, release: async () => {} };

/** What a refusal names: the limit, its value and when to retry. */
export interface BudgetRefusalDetails {
  limit: 'rate' | 'concurrency';
  tenant: string;
  budget: number;
  retryAfterSeconds: number;
  [key: string]: unknown;
}

export class TenantBudgets {
  private readonly limiters = new Map<number, RateLimiterRedis>();
  /** Adds an answer's units whatever the limit: a limit no charge reaches. */
  private readonly settler: RateLimiterRedis;
  private readonly inflight: TenantInflight;
  private readonly costUnits: Counter<'tenant'>;
  private readonly refusals: Counter<'tenant' | 'limit'>;
  private readonly unchecked: Counter;

  constructor(
    private readonly opts: {
      /** The gateway's producer connection: no offline queue, so a check while Redis is down fails at once. */
      redis: Redis;
      prefix: string;
      defaults: BudgetDefaults;
      registry: Registry;
      /** The bounded tenant label of the process's metrics (tenant-label.ts). */
      tenantLabel: (tenant: string) => string;
      leaseMs?: number;
    },
  ) {
    this.settler = this.limiter(Number.MAX_SAFE_INTEGER);
    this.inflight = new TenantInflight(opts.redis, opts.prefix, opts.leaseMs);
    this.costUnits = new Counter({
      name: 'vouch_tenant_cost_units_total',
      help: 'Cost units charged to each tenant for operations the gateway admitted (tenants past METRICS_TENANT_LABELS count as _other).',
      labelNames: ['tenant'] as const,
      registers: [opts.registry],
    });
    this.refusals = new Counter({
      name: 'vouch_tenant_budget_refusals_total',
      help: 'Operations refused 429 because their tenant had spent its rate budget or held its concurrency budget, by tenant and limit.',
      labelNames: ['tenant', 'limit'] as const,
      registers: [opts.registry],
    });
    this.unchecked = new Counter({
      name: 'vouch_gateway_budget_checks_skipped_total',
      help: 'Operations admitted without a budget check because Redis could not be reached (a queued one then fails with 503 anyway).',
      registers: [opts.registry],
    });
  }

  /** The Redis key of a tenant's rate window (for tests and operators). */
  rateKey(tenant: string): string {
    return this.settler.getKey(tenant);
  }

  /** The Redis key of a tenant's slots in flight. */
  inflightKey(tenant: string): string {
    return this.inflight.leasesKey(tenant);
  }

  /**
   * Admits one operation of `cost` units for the caller's tenant: a slot of
   * its concurrency budget, then the cost from its rate budget; or throws the
   * 429 naming the limit that is spent and when to retry. A refused operation
   * is charged nothing. While Redis cannot be reached the operation is
   * admitted unchecked: what needs only Postgres keeps working, and a queued
   * operation fails with its own 503.
   */
  async admit(caller: Caller, operation: string, cost: number): Promise<Admission> {
    const { tenant } = caller;
    const limits = this.limitsOf(caller);
    let slot: InflightSlot;
    try {
      const took = await this.inflight.take(tenant, limits.concurrency);
      if (!took.taken) throw this.refuseConcurrency(caller, limits.concurrency, took.held);
      slot = took.slot;
    } catch (err) {
      if (err instanceof VouchError) throw err;
      this.unchecked.inc();
      return UNCHECKED;
    }
    // A call dearer than the whole budget is charged the whole budget: it runs in a window of its own instead of never.
    const charge = Math.min(cost, limits.rate);
    try {
      await this.limiter(limits.rate).consume(tenant, charge);
    } catch (err) {
      await slot.release();
      if (err instanceof RateLimiterRes) throw this.refuseRate(caller, operation, cost, limits.rate, err);
      this.unchecked.inc();
      return UNCHECKED;
    }
    this.costUnits.inc({ tenant: this.opts.tenantLabel(tenant) }, cost);
    return {
      charge: async (units) => {
        if (units <= 0) return;
        this.costUnits.inc({ tenant: this.opts.tenantLabel(tenant) }, units);
        await this.settler.penalty(tenant, Math.ceil(units)).catch(() => undefined);
      },
      release: () => slot.release(),
    };
  }

  /** Stops renewing the slots this gateway holds (they run out with their leases). */
  close(): void {
    this.inflight.close();
  }

  private limitsOf(caller: Caller): { rate: number; concurrency: number } {
    return { rate: caller.budgets.rate ?? this.opts.defaults.rate, concurrency: caller.budgets.concurrency ?? this.opts.defaults.concurrency };
  }

  /** One limiter per distinct limit, all over the same counters: a key's override changes the limit, not the tenant's count. */
  private limiter(points: number): RateLimiterRedis {
    let limiter = this.limiters.get(points);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.opts.redis,
        keyPrefix: `${this.opts.prefix}:vouch-tenant-rate`,
        points,
        duration: this.opts.defaults.windowSeconds,
        customIncrTtlLuaScript: CHARGE_IF_IT_FITS,
        rejectIfRedisNotReady: true,
      });
      this.limiters.set(points, limiter);
    }
    return limiter;
  }

  private refuseRate(caller: Caller, operation: string, cost: number, budget: number, res: RateLimiterRes): VouchError {
    const { tenant, keyId } = caller;
    const retryAfterSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    const used = Math.max(0, res.consumedPoints - Math.min(cost, budget));
    const window = this.opts.defaults.windowSeconds;
    const whole = cost > budget ? ` (it costs more than the whole budget, so it is charged the whole budget and runs only in a window of its own)` : '';
    this.refusals.inc({ tenant: this.opts.tenantLabel(tenant), limit: 'rate' });
    const details: BudgetRefusalDetails = { limit: 'rate', tenant, budget, windowSeconds: window, used, cost, retryAfterSeconds };
    return new VouchError(
      ERROR_CODES.tooManyRequests,
      `tenant ${tenant}'s rate budget of ${budget} cost units per ${window} s is spent: ${used} used in this window, and this ${operation} costs ${cost}${whole}. ` +
        `Retry after ${retryAfterSeconds} s, when the window ends, or ask an operator to raise this key's rate (npm run keys -- budget ${keyId} --rate N)`,
      { details },
    );
  }

  private refuseConcurrency(caller: Caller, budget: number, held: number): VouchError {
    const { tenant, keyId } = caller;
    this.refusals.inc({ tenant: this.opts.tenantLabel(tenant), limit: 'concurrency' });
    const details: BudgetRefusalDetails = { limit: 'concurrency', tenant, budget, inFlight: held, retryAfterSeconds: CONCURRENCY_RETRY_AFTER_SECONDS };
    return new VouchError(
      ERROR_CODES.tooManyRequests,
      `tenant ${tenant} already has ${held} operations in flight, its concurrency budget of ${budget}: retry after ${CONCURRENCY_RETRY_AFTER_SECONDS} s, when one of them may have ended, ` +
        `or ask an operator to raise this key's concurrency (npm run keys -- budget ${keyId} --concurrency N)`,
      { details },
    );
  }
}
