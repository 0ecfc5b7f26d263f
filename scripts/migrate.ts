/**
 * Applies every service's migrations to its schema: `npm run migrate`.
 * Services also apply their own at start (under a lock), so this is for
 * operators who want migrations done before anything starts.
 */
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { commonEnvSchema, createLogger, defaultSchema, loadConfigOrExit, postgresTargets, runMigrations, startOrExit, withLocalStack } from '@vouch/platform';

// DATABASE_URL defaults to the local stack's Postgres, as in scripts/up.sh; DATABASE_DIRECT_URL, when set, is
// the server behind a pooler, which the migrations' advisory lock needs (docs/architecture.md, "Postgres behind a pooler").
const env = loadConfigOrExit('migrate', commonEnvSchema.pick({ DATABASE_URL: true, DATABASE_DIRECT_URL: true, LOG_LEVEL: true, PG_CONNECT_TIMEOUT_MS: true }), withLocalStack());
const targets = postgresTargets(env);
const logger = createLogger({ service: 'migrate', level: env.LOG_LEVEL });
const servicesDir = fileURLToPath(new URL('../services', import.meta.url));
for (const service of readdirSync(servicesDir).sort()) {
  const dir = `${servicesDir}/${service}/migrations`;
  if (!existsSync(dir)) continue;
  const applied = await startOrExit('migrate', () => runMigrations({ databaseUrl: targets.directUrl, variable: targets.directVariable, schema: defaultSchema(service), dir, logger, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS }), {
    hint: 'start the stack with ./scripts/up.sh, or set DATABASE_URL',
  });
  console.log(`${service}: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
}
