import { z } from 'zod';
import { LOCAL_STACK } from './local-stack.js';

/** Thrown when the environment does not satisfy a config schema; names every offending variable. */
export class ConfigError extends Error {
  readonly variables: string[];
  constructor(message: string, variables: string[]) {
    super(message);
    this.name = 'ConfigError';
    this.variables = variables;
  }
}

const url = (what: string, example: string) =>
  z.string({ error: `is required: set it to the ${what} URL, e.g. ${example}` }).trim().pipe(z.url({ error: `must be a ${what} URL such as ${example}` }));

/** Variables every process reads. Services extend this with their own. */
export const commonEnvSchema = z.object({
  REDIS_URL: url('Redis', LOCAL_STACK.REDIS_URL),
  /**
   * Sentinels to ask for the primary (host:port,host:port,...). Set, every
   * Redis connection goes through them and follows a failover without a
   * restart; REDIS_URL then gives only the Redis nodes' credentials, database
   * and TLS (redis.ts, redisOptions). Unset: REDIS_URL is the server.
   */
  REDIS_SENTINELS: z.string().trim().transform((raw, ctx) => parseSentinels(raw, ctx)).optional(),
  /** The master group the sentinels monitor (`sentinel monitor <name> ...`); unset: mymaster. */
  REDIS_SENTINEL_NAME: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._:-]{1,100}$/, 'must be the master group name from the sentinels\' `sentinel monitor <name> ...` line (letters, digits, . _ : -), e.g. mymaster')
    .optional(),
  /** AUTH for the sentinels themselves (`requirepass` in sentinel.conf); the Redis nodes' password stays in REDIS_URL. */
  REDIS_SENTINEL_USERNAME: z.string().optional(),
  REDIS_SENTINEL_PASSWORD: z.string().optional(),
  DATABASE_URL: url('Postgres', LOCAL_STACK.DATABASE_URL),
  /**
   * The Postgres server itself, when DATABASE_URL is a pooler in transaction
   * mode (PgBouncer pool_mode=transaction). Set, it takes the work that needs
   * a session of its own (migrations under their advisory lock, the
   * board-dispatcher's LISTEN), and the service pools set their schema and
   * statement timeout in each transaction, which the pooler keeps, not at
   * connect, which it refuses or drops (postgres.ts, postgresTargets).
   */
  DATABASE_DIRECT_URL: url('Postgres', LOCAL_STACK.DATABASE_URL).optional(),
  BULLMQ_PREFIX: z.string().regex(/^[A-Za-z0-9_-]{1,50}$/, 'must be 1-50 letters, digits, _ or -').default('vouch'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Below Kubernetes' default 30 s terminationGracePeriodSeconds, so running jobs finish before SIGKILL. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(25_000),
  DB_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase Postgres identifier').optional(),
  /** Bound on opening a Postgres connection: a server that accepts and never answers fails the start (or the request) after it. */
  PG_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  /** Server-side statement_timeout of the service pools, in ms; 0 turns it off. Migrations are not bounded by it. */
  PG_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  /**
   * The most of a service worker's slots one tenant's jobs may hold at once;
   * unset: half of WORKER_CONCURRENCY (at least one slot per tenant on the
   * queue). WORKER_CONCURRENCY or more turns the limit off.
   */
  TENANT_CONCURRENCY: z.coerce.number().int().min(1, 'must be at least 1').max(256, 'must be at most 256').optional(),
  /**
   * Tenants a process names in its tenant-labelled metrics; later ones are
   * counted as `_other` (tenant-label.ts). Unset: 100. Each named tenant is a
   * set of series per metric in Prometheus.
   */
  METRICS_TENANT_LABELS: z.coerce.number().int().min(0, 'must be at least 0 (0: every tenant is counted as _other)').max(10_000, 'must be at most 10000').optional(),
});
export type CommonEnv = z.infer<typeof commonEnvSchema>;

const SENTINELS_HINT = 'must be a comma-separated list of sentinel host:port pairs, e.g. 10.0.0.1:26379,10.0.0.2:26379 (unset it to connect to REDIS_URL directly)';

/** REDIS_SENTINELS' host:port list; IPv6 hosts in brackets ([::1]:26379). */
function parseSentinels(raw: string, ctx: z.RefinementCtx): { host: string; port: number }[] {
  const sentinels: { host: string; port: number }[] = [];
  for (const item of raw.split(',').map((s) => s.trim())) {
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(item);
    const port = m ? Number(m[3]) : NaN;
    if (!m || port < 1 || port > 65_535) {
      ctx.addIssue({ code: 'custom', message: `${SENTINELS_HINT}; "${item}" is not one` });
      return [];
    }
    sentinels.push({ host: (m[1] ?? m[2])!, port });
  }
  return sentinels;
}

/** An HTTP port variable with a default. */
export function portVar(defaultPort: number) {
  return z.coerce.number().int().min(0).max(65_535).default(defaultPort);
}

/**
 * Parses the environment against a schema. On failure throws one ConfigError
 * whose message lists every offending variable and what it should hold.
 */
export function parseConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  // Empty strings count as unset, as a shell `FOO=` usually means.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const byVar = new Map<string, string[]>();
  for (const issue of result.error.issues) {
    const name = String(issue.path[0] ?? '(environment)');
    byVar.set(name, [...(byVar.get(name) ?? []), issue.message]);
  }
  const lines = [...byVar].map(([name, msgs]) => `  ${name} ${msgs.join('; ')}`);
  return throwConfig(`invalid configuration (${byVar.size} variable${byVar.size === 1 ? '' : 's'}):\n${lines.join('\n')}`, [...byVar.keys()]);
}

function throwConfig(message: string, variables: string[]): never {
  throw new ConfigError(message, variables);
}

/**
 * parseConfig for a process entry point: a bad or missing variable prints one
 * message naming every offending variable and exits with EX_CONFIG (78)
 * before anything starts.
 */
export function loadConfigOrExit<S extends z.ZodType>(service: string, schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  try {
    return parseConfig(schema, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`${service}: ${err.message}`);
    process.exit(78);
  }
}

/** A URL with its password replaced, safe to log. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable url)';
  }
}

/**
 * A service's base URL (OLLAMA_HOST) as logs name it: redactUrl's form
 * without the "/" that parsing adds to a bare host, so it reads as it was
 * configured ("http://gpu-1:11434").
 */
export function redactHost(raw: string): string {
  return redactUrl(raw).replace(/\/$/, '');
}
