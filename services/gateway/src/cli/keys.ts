/**
 * API key administration: `npm run keys -- create --tenant NAME [--agent AGENT] [--scopes a,b] [--name LABEL] [--rate N] [--concurrency N] [--json]`,
 * `npm run keys -- create --operator [--name LABEL] [--json]` (the queue dashboard's credential),
 * `npm run keys -- list [--tenant NAME] [--json]`, `npm run keys -- revoke ID`,
 * `npm run keys -- budget ID [--rate N|default] [--concurrency N|default]` (a key's own budgets).
 * Reads DATABASE_URL (and DB_SCHEMA) like the gateway, defaulting to the local
 * stack's Postgres as `scripts/up.sh` does; applies the gateway's migrations first.
 */
import { parseArgs } from 'node:util';
import { OPERATOR_TENANT, SCOPES, keyAgentProblem, type Scope } from '@vouch/contracts';
import { commonEnvSchema, createPool, createProducerRedis, defaultSchema, loadConfigOrExit, postgresTargets, describeRedisTarget, redisTarget, runMigrations, startOrExit, withLocalStack } from '@vouch/platform';
import { API_KEY_CACHE_TTL_MS, announceKeyChange, announceRevocation } from '../api-key-cache.js';
import { createApiKey, createOperatorKey, listApiKeys, revokeApiKey, setKeyBudgets } from '../api-keys.js';
import { MIGRATIONS_DIR } from '../migrations-dir.js';
import { describeKeyBudgets, parseBudgetFlag, type KeyBudgets } from '../key-budgets.js';

const USAGE = `usage:
  npm run keys -- create --tenant NAME [--agent AGENT] [--scopes ${SCOPES.join(',')}] [--name LABEL] [--rate N] [--concurrency N] [--json]
                                  (--agent: who the key acts as on boards and ledgers; default key-<key id>)
                                  (--rate: cost units its tenant may spend per window with this key; default TENANT_RATE_BUDGET)
                                  (--concurrency: its tenant's operations in flight at once with this key; default TENANT_CONCURRENCY_BUDGET)
  npm run keys -- create --operator [--name LABEL] [--json]     (opens /admin/queues; reaches no tenant's operations)
  npm run keys -- list [--tenant NAME] [--json]
  npm run keys -- revoke KEY_ID
  npm run keys -- budget KEY_ID [--rate N|default] [--concurrency N|default]   (default: back to the gateway's)`;

// Where running gateways listen for revocations: the same Redis and prefix they use.
const env = loadConfigOrExit(
  'keys',
  commonEnvSchema.pick({ DATABASE_URL: true, DATABASE_DIRECT_URL: true, DB_SCHEMA: true, REDIS_URL: true, REDIS_SENTINELS: true, REDIS_SENTINEL_NAME: true, REDIS_SENTINEL_USERNAME: true, REDIS_SENTINEL_PASSWORD: true, BULLMQ_PREFIX: true, PG_CONNECT_TIMEOUT_MS: true }),
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
        rate: { type: 'string' },
        concurrency: { type: 'string' },
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

/** The budgets the flags name, checked before Postgres is touched; `default` (back to the gateway's) only where a key already exists. */
function budgetFlags(allowDefault: boolean): Partial<KeyBudgets> {
  const budgets: Partial<KeyBudgets> = {};
  try {
    if (values.rate !== undefined) budgets.rate = parseBudgetFlag('rate', values.rate, { allowDefault });
    if (values.concurrency !== undefined) budgets.concurrency = parseBudgetFlag('concurrency', values.concurrency, { allowDefault });
  } catch (err) {
    fail((err as Error).message);
  }
  return budgets;
}
const budgets = command === 'budget' ? budgetFlags(true) : command === 'create' ? budgetFlags(false) : {};
if (command === 'create' && values.operator && Object.keys(budgets).length) fail('an operator key runs no operations, so it has no budgets: drop --rate and --concurrency');
if (command === 'budget' && !Object.keys(budgets).length) fail('budget needs --rate and/or --concurrency (a number, or default)');

/** Tells running gateways over Redis to forget a key at once; says so when Redis cannot be reached. */
async function tellGateways(announce: typeof announceRevocation, id: string, what: string): Promise<void> {
  const redis = createProducerRedis(redisTarget(env), 'keys-cli');
  redis.on('error', () => {});
  try {
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', resolve);
      setTimeout(() => reject(new Error('timeout')), 3_000).unref();
    });
    await announce(redis, env.BULLMQ_PREFIX, id);
  } catch {
    console.error(`keys: could not tell running gateways over Redis (${describeRedisTarget(redisTarget(env))}); they ${what} within ${API_KEY_CACHE_TTL_MS / 1000} s`);
  } finally {
    redis.disconnect();
  }
}

const schema = env.DB_SCHEMA ?? defaultSchema('gateway');
// Most often Postgres is not running: one line saying where it was looked for and how to fix it (exit 78).
const targets = postgresTargets(env);
await startOrExit('keys', () => runMigrations({ databaseUrl: targets.directUrl, variable: targets.directVariable, schema, dir: MIGRATIONS_DIR, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS }), {
  hint: 'start the stack with ./scripts/up.sh, or set DATABASE_URL',
});
const pool = createPool({ url: targets.url, schema, max: 1, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS, transactionPooling: targets.transactionPooling });
try {
  if (command === 'create') {
    if (values.operator && (values.tenant || values.scopes)) fail('an operator key has no tenant and no scopes: drop --tenant and --scopes');
    if (!values.operator && !values.tenant) fail('create needs --tenant NAME (or --operator for a queue dashboard key)');
    const scopes = values.scopes?.split(',').map((s) => s.trim()).filter(Boolean) as Scope[] | undefined;
    let created;
    try {
      created = values.operator
        ? await createOperatorKey(pool, values.name ? { name: values.name } : {})
        : await createApiKey(pool, {
            tenant: values.tenant!,
            ...(scopes ? { scopes } : {}),
            ...(values.name ? { name: values.name } : {}),
            ...(values.agent !== undefined ? { agent: values.agent } : {}),
            budgets,
          });
    } catch (err) {
      fail((err as Error).message);
    }
    if (values.json) console.log(JSON.stringify({ ...created.record, key: created.key }));
    else {
      console.log(created.key);
      const acts = values.operator ? '' : `, acting as agent ${created.record.agent}${created.record.agentNamed ? '' : ' (no --agent given)'}`;
      const own = values.operator ? '' : `; budgets: ${describeKeyBudgets(created.record.budgets)}`;
      console.error(`created key ${created.record.id} for tenant ${created.record.tenant}${acts} (scopes: ${created.record.scopes.join(', ')}${own}); it is shown only now: store it`);
    }
  } else if (command === 'list') {
    const keys = await listApiKeys(pool, values.tenant);
    if (values.json) console.log(JSON.stringify(keys));
    else {
      for (const k of keys) {
        const operator = k.tenant === OPERATOR_TENANT;
        console.log([k.id, k.tenant, `agent=${operator ? '-' : k.agent}`, k.scopes.join(','), k.revokedAt ? `revoked ${k.revokedAt}` : 'active', k.name ?? '', operator ? '-' : describeKeyBudgets(k.budgets)].join('\t'));
      }
    }
  } else if (command === 'revoke') {
    const id = rest[0] ?? fail('revoke needs the key id (see `npm run keys -- list`)');
    if (!(await revokeApiKey(pool, id))) fail(`no key with id ${id}`);
    console.log(`revoked ${id}`);
    await tellGateways(announceRevocation, id, 'stop accepting the key');
  } else if (command === 'budget') {
    const id = rest[0] ?? fail('budget needs the key id (see `npm run keys -- list`)');
    const record = await setKeyBudgets(pool, id, budgets);
    if (!record) fail(`no tenant key with id ${id} (operator keys have no budgets)`);
    console.log(`key ${id} of tenant ${record.tenant}: ${describeKeyBudgets(record.budgets)}`);
    await tellGateways(announceKeyChange, id, 'apply it');
  } else {
    fail(command ? `unknown command ${command}` : 'name a command');
  }
} finally {
  await pool.end();
}
