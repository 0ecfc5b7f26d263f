/**
 * Where the local stack lives: the Redis and Postgres that `scripts/up.sh`
 * uses (and starts, when they are installed but stopped) unless REDIS_URL or
 * DATABASE_URL says otherwise. The developer commands the README shows
 * (`npm run keys`, `npm run migrate`) fall back to the same addresses, so
 * they work as written after `./scripts/up.sh`. Services do not: in a
 * deployment a missing URL is a configuration error, never a reason to try
 * localhost. `shared/platform/test/local-stack.test.ts` holds up.sh and the
 * README to these values.
 */
export const LOCAL_STACK = {
  REDIS_URL: 'redis://127.0.0.1:6379',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
} as const;

/**
 * The environment with the local stack's URLs where REDIS_URL or
 * DATABASE_URL is unset or empty (a shell `FOO=` usually means unset).
 */
export function withLocalStack(env: Record<string, string | undefined> = process.env): Record<string, string | undefined> {
  return { ...env, REDIS_URL: env.REDIS_URL || LOCAL_STACK.REDIS_URL, DATABASE_URL: env.DATABASE_URL || LOCAL_STACK.DATABASE_URL };
}
