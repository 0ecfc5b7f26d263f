/**
 * A tenant's budgets, as the gateway's configuration sets them for every key
 * and as one key may override them (docs/architecture.md, "Costs and
 * budgets"). The numbers are bounded the same way wherever they come from:
 * the environment, `npm run keys -- create/budget`, or a row of api_keys.
 */

/** The most cost units per window a budget may name: the api_keys column is a Postgres integer. */
export const MAX_RATE_BUDGET = 2_000_000_000;
/** The most operations in flight a budget may name. */
export const MAX_CONCURRENCY_BUDGET = 100_000;

/** A key's own budgets; null where the key takes the gateway's default. */
export interface KeyBudgets {
  /** Cost units the tenant may spend per window when it calls with this key (TENANT_RATE_BUDGET otherwise). */
  rate: number | null;
  /** Operations of the tenant in flight at once when it calls with this key (TENANT_CONCURRENCY_BUDGET otherwise). */
  concurrency: number | null;
}

export const NO_KEY_BUDGETS: KeyBudgets = { rate: null, concurrency: null };

const BOUNDS = {
  rate: { max: MAX_RATE_BUDGET, unit: 'cost units per window', variable: 'TENANT_RATE_BUDGET' },
  concurrency: { max: MAX_CONCURRENCY_BUDGET, unit: 'operations in flight', variable: 'TENANT_CONCURRENCY_BUDGET' },
} as const;

/** Why a budget value is not acceptable, or undefined. */
export function budgetProblem(kind: keyof KeyBudgets, value: number): string | undefined {
  const { max, unit } = BOUNDS[kind];
  if (!Number.isSafeInteger(value) || value < 1 || value > max) return `must be a whole number of ${unit} from 1 to ${max}`;
  return undefined;
}

/**
 * Reads a budget as an operator types it (`--rate 1200`): a whole number in
 * bounds, or `default` (null: the gateway's default) where `allowDefault`.
 * Throws naming the flag and what to type instead.
 */
export function parseBudgetFlag(kind: keyof KeyBudgets, text: string, opts: { allowDefault: boolean }): number | null {
  if (opts.allowDefault && text === 'default') return null;
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  const problem = budgetProblem(kind, value);
  if (problem) {
    const fallback = opts.allowDefault ? `, or default for the gateway's ${BOUNDS[kind].variable}` : '';
    throw new Error(`--${kind} ${JSON.stringify(text)}: ${problem}${fallback}`);
  }
  return value;
}

/** A key's budgets as `list` shows them: `rate=1200 concurrency=default`. */
export function describeKeyBudgets(budgets: KeyBudgets): string {
  return `rate=${budgets.rate ?? 'default'} concurrency=${budgets.concurrency ?? 'default'}`;
}
