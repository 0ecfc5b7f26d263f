/**
 * API key administration: `npm run keys -- create --tenant NAME [--agent AGENT] [--scopes a,b] [--name LABEL] [--json]`,
 * `npm run keys -- create --operator [--name LABEL] [--json]` (the queue dashboard's credential),
 * `npm run keys -- list [--tenant NAME] [--json]`, `npm run keys -- revoke ID`.
 * Reads DATABASE_URL (and DB_SCHEMA) like the gateway, defaulting to the local
 * stack's Postgres as `scripts/up.sh` does; applies the gateway's migrations first.
 */
import { parseArgs } from 'node:util';
import { OPERATOR_TENANT, SCOPES, keyAgentProblem, type Scope } from '@vouch/contracts';
import { commonEnvSchema, createPool, createProducerRedis, defaultSchema, loadConfigOrExit, redactUrl, runMigrations, startOrExit, withLocalStack } from '@vouch/platform';
import { API_KEY_CACHE_TTL_MS, announceRevocation } from '../api-key-cache.js';
import { createApiKey, createOperatorKey, listApiKeys, revokeApiKey } from '../api-keys.js';
import { MIGRATIONS_DIR } from '../gateway.js';

const USAGE = `usage:
  npm run keys -- create --tenant NAME [--agent AGENT] [--scopes ${SCOPES.join(',')}] [--name LABEL] [--json]
                                  (--agent: who the key acts as on boards and ledgers; default key-<key id>)
  npm run keys -- create --operator [--name LABEL] [--json]     (opens /admin/queues; reaches no tenant's operations)
  npm run keys -- list [--tenant NAME] [--json]
  npm run keys -- revoke KEY_ID`;

// Where running gateways listen for revocations: the same Redis and prefix they use.
const env = loadConfigOrExit(
  'keys',
  commonEnvSchema.pick({ DATABASE_URL: true, DB_SCHEMA: true, REDIS_URL: true, BULLMQ_PREFIX: true, PG_CONNECT_TIMEOUT_MS: true }),
  withLocalStack(),
);

function fail(message: string): never {
  console.error(`keys: ${message}\n${USAGE}`);
  process.exit(2);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        tenant: { type: 'string' },
        agent: { type: 'string' },
        operator: { type: 'boolean', default: false },
        scopes: { type: 'string' },
        name: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    return fail((err as Error).message);
  }
})();
const [command, ...rest] = positionals;

// Checked before Postgres is touched: a reserved or malformed agent name is a usage error, whatever the database.
if (command === 'create' && values.agent !== undefined) {
  if (values.operator) fail('an operator key acts as no agent: drop --agent');
  const problem = keyAgentProblem(values.agent);
  if (problem) fail(`--agent ${JSON.stringify(values.agent)}: ${problem}`);
}

const schema = env.DB_SCHEMA ?? defaultSchema('gateway');
// Most often Postgres is not running: one line saying where it was looked for and how to fix it (exit 78).
await startOrExit('keys', () => runMigrations({ databaseUrl: env.DATABASE_URL, schema, dir: MIGRATIONS_DIR, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS }), {
  hint: 'start the stack with ./scripts/up.sh, or set DATABASE_URL',
});
const pool = createPool({ url: env.DATABASE_URL, schema, max: 1, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS });
try {
  if (command === 'create') {
    if (values.operator && (values.tenant || values.scopes)) fail('an operator key has no tenant and no scopes: drop --tenant and --scopes');
    if (!values.operator && !values.tenant) fail('create needs --tenant NAME (or --operator for a queue dashboard key)');
    const scopes = values.scopes?.split(',').map((s) => s.trim()).filter(Boolean) as Scope[] | undefined;
    let created;
    try {
      created = values.operator
        ? await createOperatorKey(pool, values.name ? { name: values.name } : {})
        : await createApiKey(pool, { tenant: values.tenant!, ...(scopes ? { scopes } : {}), ...(values.name ? { name: values.name } : {}), ...(values.agent !== undefined ? { agent: values.agent } : {}) });
    } catch (err) {
      fail((err as Error).message);
    }
    if (values.json) console.log(JSON.stringify({ ...created.record, key: created.key }));
    else {
      console.log(created.key);
      const acts = values.operator ? '' : `, acting as agent ${created.record.agent}${created.record.agentNamed ? '' : ' (no --agent given)'}`;
      console.error(`created key ${created.record.id} for tenant ${created.record.tenant}${acts} (scopes: ${created.record.scopes.join(', ')}); it is shown only now: store it`);
    }
  } else if (command === 'list') {
    const keys = await listApiKeys(pool, values.tenant);
    if (values.json) console.log(JSON.stringify(keys));
    else for (const k of keys) console.log([k.id, k.tenant, `agent=${k.tenant === OPERATOR_TENANT ? '-' : k.agent}`, k.scopes.join(','), k.revokedAt ? `revoked ${k.revokedAt}` : 'active', k.name ?? ''].join('\t'));
  } else if (command === 'revoke') {
    const id = rest[0] ?? fail('revoke needs the key id (see `npm run keys -- list`)');
    if (!(await revokeApiKey(pool, id))) fail(`no key with id ${id}`);
    console.log(`revoked ${id}`);
    const redis = createProducerRedis(env.REDIS_URL, 'keys-cli');
    redis.on('error', () => {});
    try {
      await new Promise<void>((resolve, reject) => {
        redis.once('ready', resolve);
        setTimeout(() => reject(new Error('timeout')), 3_000).unref();
      });
      await announceRevocation(redis, env.BULLMQ_PREFIX, id);
    } catch {
      console.error(`keys: could not tell running gateways over Redis (${redactUrl(env.REDIS_URL)}); they stop accepting the key within ${API_KEY_CACHE_TTL_MS / 1000} s`);
    } finally {
      redis.disconnect();
    }
  } else {
    fail(command ? `unknown command ${command}` : 'name a command');
  }
} finally {
  await pool.end();
}
