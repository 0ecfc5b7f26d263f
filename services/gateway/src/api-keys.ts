import { createHash, randomBytes } from 'node:crypto';
import { OPERATOR_TENANT, SCOPES, SYSTEM_TENANT, agentOfKey, keyAgentProblem, type Scope } from '@vouch/contracts';
import type { Queryable } from '@vouch/platform';
import { NO_KEY_BUDGETS, budgetProblem, type KeyBudgets } from './key-budgets.js';

/** Who is calling: resolved from a bearer API key. */
export interface Caller {
  keyId: string;
  tenant: string;
  scopes: Scope[];
  /** The agent the key acts as: its `--agent`, or `key-<id>` for a key made without one. */
  agent: string;
  /** The key's own rate and concurrency budgets for its tenant; null where it takes the gateway's defaults. */
  budgets: KeyBudgets;
}

/** Whether a caller holds an operator key: the queue dashboard's credential, which reaches no tenant's operations. */
export function isOperator(caller: Caller): boolean {
  return caller.tenant === OPERATOR_TENANT;
}

export interface ApiKeyRecord {
  id: string;
  tenant: string;
  name: string | null;
  scopes: Scope[];
  /** The agent the key acts as (`key-<id>` when it was made without --agent). */
  agent: string;
  /** Whether the agent was named at creation (--agent) or derived from the key id. */
  agentNamed: boolean;
  budgets: KeyBudgets;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Scopes a new key gets when none are named: everything an agent gateway needs, not admin. */
export const DEFAULT_SCOPES: Scope[] = SCOPES.filter((s) => s !== 'admin');

const KEY_PATTERN = /^vk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const TENANT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const RECORD_COLUMNS = 'id, tenant, name, scopes, agent, rate_budget, concurrency_budget, created_at, last_used_at, revoked_at';

function hashKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** Checks a tenant name; returns the reason it is not acceptable, or undefined. */
export function tenantProblem(tenant: string): string | undefined {
  if (!TENANT_PATTERN.test(tenant)) return 'a tenant is 1-63 lowercase letters, digits, _ or -, starting with a letter or digit';
  // Internal jobs (system.ping) run as tenant "system"; no caller may own their results.
  if (tenant === SYSTEM_TENANT) return `"${SYSTEM_TENANT}" is reserved for vouch's own jobs: choose another name`;
  return undefined;
}

/** Throws naming each budget of `budgets` that is out of bounds. */
function checkBudgets(budgets: Partial<KeyBudgets>): void {
  for (const kind of ['rate', 'concurrency'] as const) {
    const value = budgets[kind];
    if (value === undefined || value === null) continue;
    const problem = budgetProblem(kind, value);
    if (problem) throw new Error(`invalid ${kind} budget ${value}: ${problem}`);
  }
}

/**
 * Creates a key. The clear key (`vk_<id>_<secret>`) is returned once and
 * never stored: only its SHA-256 is. `agent` is who the key acts as on
 * boards and ledgers; without it the key acts as `key-<id>`. `budgets`
 * override the gateway's rate and concurrency defaults for calls with it.
 */
export async function createApiKey(
  db: Queryable,
  opts: { tenant: string; scopes?: Scope[]; name?: string; agent?: string; budgets?: Partial<KeyBudgets> },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const problem = tenantProblem(opts.tenant);
  if (problem) throw new Error(`invalid tenant ${JSON.stringify(opts.tenant)}: ${problem}`);
  if (opts.agent !== undefined) {
    const agentProblem = keyAgentProblem(opts.agent);
    if (agentProblem) throw new Error(`invalid agent ${JSON.stringify(opts.agent)}: ${agentProblem}`);
  }
  checkBudgets(opts.budgets ?? {});
  return insertKey(db, opts.tenant, opts.scopes?.length ? [...new Set(opts.scopes)] : DEFAULT_SCOPES, opts.name, opts.agent, { ...NO_KEY_BUDGETS, ...opts.budgets });
}

/**
 * Sets a key's budgets: a number overrides the gateway's default, null goes
 * back to it, a kind left out stays as it is. Returns the key's record, or
 * undefined when there is no such key. Running gateways learn of it when
 * told over Redis (announceKeyChange) or within the key cache's TTL.
 */
export async function setKeyBudgets(db: Queryable, id: string, budgets: Partial<KeyBudgets>): Promise<ApiKeyRecord | undefined> {
  checkBudgets(budgets);
  const { rows } = await db.query(
    `UPDATE api_keys SET
       rate_budget = CASE WHEN $2 THEN $3::integer ELSE rate_budget END,
       concurrency_budget = CASE WHEN $4 THEN $5::integer ELSE concurrency_budget END
     WHERE id = $1 AND tenant <> $6
     RETURNING ${RECORD_COLUMNS}`,
    [id, budgets.rate !== undefined, budgets.rate ?? null, budgets.concurrency !== undefined, budgets.concurrency ?? null, OPERATOR_TENANT],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * Creates an operator key: it opens the queue dashboard (every tenant's jobs)
 * and nothing else. Only someone with the database, through the keys CLI, can
 * make one; no tenant key, whatever its scopes, can.
 */
export async function createOperatorKey(db: Queryable, opts: { name?: string } = {}): Promise<{ key: string; record: ApiKeyRecord }> {
  return insertKey(db, OPERATOR_TENANT, ['admin'], opts.name);
}

async function insertKey(db: Queryable, tenant: string, scopes: Scope[], name: string | undefined, agent?: string, budgets: KeyBudgets = NO_KEY_BUDGETS): Promise<{ key: string; record: ApiKeyRecord }> {
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`unknown scope ${unknown.join(', ')}: choose from ${SCOPES.join(', ')}`);
  const id = randomBytes(9).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 12).padEnd(12, '0');
  const key = `vk_${id}_${randomBytes(32).toString('base64url')}`;
  const { rows } = await db.query(
    `INSERT INTO api_keys (id, tenant, name, scopes, key_hash, agent, rate_budget, concurrency_budget) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     RETURNING ${RECORD_COLUMNS}`,
    [id, tenant, name ?? null, scopes, hashKey(key), agent ?? null, budgets.rate, budgets.concurrency],
  );
  return { key, record: toRecord(rows[0]) };
}

/** Keys, newest first, optionally of one tenant. Never includes the key or its hash. */
export async function listApiKeys(db: Queryable, tenant?: string): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query(
    `SELECT ${RECORD_COLUMNS} FROM api_keys
     WHERE $1::text IS NULL OR tenant = $1 ORDER BY created_at DESC, id`,
    [tenant ?? null],
  );
  return rows.map(toRecord);
}

/** Revokes a key by id; returns false when there is no such key. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1`, [id]);
  return rowCount === 1;
}

/** The caller a bearer key belongs to, or undefined for an unknown, malformed or revoked key. */
export async function authenticateApiKey(db: Queryable, key: string): Promise<Caller | undefined> {
  if (!KEY_PATTERN.test(key)) return undefined;
  const hash = hashKey(key);
  const { rows } = await db.query(`SELECT id, tenant, scopes, agent, rate_budget, concurrency_budget, last_used_at FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`, [hash]);
  const row = rows[0];
  if (!row) return undefined;
  // last_used_at is for operators (which keys are live); writing it at most once a
  // minute, off the request's path, keeps authentication to one read.
  if (!row.last_used_at || Date.now() - (row.last_used_at as Date).getTime() > 60_000) {
    db.query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1`, [row.id]).catch(() => {});
  }
  return { keyId: row.id, tenant: row.tenant, scopes: row.scopes, agent: (row.agent as string | null) ?? agentOfKey(row.id), budgets: budgetsOf(row) };
}

function budgetsOf(row: Record<string, unknown>): KeyBudgets {
  return { rate: (row.rate_budget as number | null) ?? null, concurrency: (row.concurrency_budget as number | null) ?? null };
}

function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

function toRecord(row: Record<string, unknown>): ApiKeyRecord {
  return {
    id: row.id as string,
    tenant: row.tenant as string,
    name: (row.name as string | null) ?? null,
    scopes: row.scopes as Scope[],
    agent: (row.agent as string | null) ?? agentOfKey(row.id as string),
    agentNamed: row.agent !== null && row.agent !== undefined,
    budgets: budgetsOf(row),
    createdAt: (row.created_at as Date).toISOString(),
    lastUsedAt: iso(row.last_used_at as Date | null),
    revokedAt: iso(row.revoked_at as Date | null),
  };
}
