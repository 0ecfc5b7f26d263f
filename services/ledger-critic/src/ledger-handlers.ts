import {
  BadInputError,
  LEDGER_LIMITS,
  ConflictError,
  NotFoundError,
  ledgerGet,
  ledgerOpen,
  ledgerPacket,
  ledgerProposeCompletion,
  ledgerRecordEvidence,
  ledgerRender,
  type Actor,
  type CritiqueOutcome,
  type FieldIssue,
  type OpenItem,
  type OperationOutput,
} from '@vouch/contracts';
import { StreamWriteConflict, handle, withTransaction, writeStreamJob, type HandlerContext, type Logger, type OperationHandler, type Pool } from '@vouch/platform';
import type { z } from 'zod';
import { attributeEvents } from './domain/attribute-events.js';
import { buildCriticPrompt } from './domain/critic-packet.js';
import {
  concludeCompletionReview,
  draftCompletionReview,
  findReviewCandidates,
  openLedger,
  planCompletionReview,
  recordEvidence,
  reviewStanding,
  type LlmCriticResult,
  type ProposeCompletionCommand,
  type ReviewPlan,
} from './domain/ledger-commands.js';
import type { LedgerEvent } from './domain/ledger-events.js';
import { currentFeatures, currentKeys, extractObservationFeatures, observeEvidence, type ObservationFeatures, type StoredObservation } from '@vouch/judge';
import { toLedgerSnapshot, toLedgerView, type LedgerState } from './domain/replay-ledger.js';
import { renderLedger } from './domain/render-ledger.js';
import { isClosed } from './domain/terminal-status.js';
import { LedgerCache, freezeApplied } from './ledger-cache.js';
import { appendEvents, ledgerStream, loadCommitted, readHead, readObservationKeys, readObservations, saveObservations, type LedgerKey } from './ledger-store.js';
import type { LlmCritic } from './llm-critic.js';
import type { LedgerMetrics } from './metrics.js';

/**
 * The ledger operations. A write locks the ledger's head, brings the state
 * up to it (from this process's cache, or the snapshot, plus the events
 * after), decides with the pure domain, and appends the events at the
 * version it read in one transaction. A write that loses a race is decided
 * again on fresh state a few times before it answers 409. A completion
 * review is the exception: it decides on the version it read (the critics
 * may take a minute) and appends at the head it finds, so evidence that
 * streams in meanwhile never starves it. What a write commits is cached only
 * after its COMMIT.
 */

/** Who asks: the job's tenant, and the job id that identifies this request across BullMQ re-runs. */
export interface LedgerCaller {
  tenant: string;
  jobId: string;
  /** The agent of the caller's API key (the job envelope's actor), recorded on the events it causes; a job without one records none. */
  actor?: Actor | undefined;
}

export interface LedgerCommandDeps {
  pool: Pool;
  metrics: LedgerMetrics;
  critic: LlmCritic;
  /** The cycle budget of a ledger opened without one (LEDGER_CYCLE_BUDGET). */
  cycleBudget: number;
  logger?: Logger;
  now?: () => Date;
  /** Recent committed ledger states; a fresh one per command set when absent. */
  cache?: LedgerCache;
  /**
   * The open cards of a bound board, as open items (the board-dispatcher's
   * board.synthesize, called over the queues). Without it a bound board is
   * not read, and reviews say so.
   */
  boardOpenItems?: (tenant: string, boardId: string) => Promise<OpenItem[]>;
}

type Input<Op extends { input: z.ZodType }> = z.output<Op['input']>;

export interface LedgerCommands {
  open(caller: LedgerCaller, input: Input<typeof ledgerOpen>): Promise<OperationOutput<typeof ledgerOpen>>;
  recordEvidence(caller: LedgerCaller, input: Input<typeof ledgerRecordEvidence>): Promise<OperationOutput<typeof ledgerRecordEvidence>>;
  proposeCompletion(caller: LedgerCaller, input: Input<typeof ledgerProposeCompletion>): Promise<CritiqueOutcome>;
  get(caller: Pick<LedgerCaller, 'tenant'>, input: z.input<(typeof ledgerGet)['input']>): Promise<OperationOutput<typeof ledgerGet>>;
  packet(caller: Pick<LedgerCaller, 'tenant'>, input: Input<typeof ledgerPacket>): Promise<OperationOutput<typeof ledgerPacket>>;
  render(caller: Pick<LedgerCaller, 'tenant'>, input: Input<typeof ledgerRender>): Promise<OperationOutput<typeof ledgerRender>>;
}

/** Tries of a write that keeps losing races before it answers 409; each try reloads. */
const WRITE_TRIES = 5;
/**
 * Tries of a review that another review of the same run overtook while the
 * critics ran (evidence recorded meanwhile never costs a try); each may ask
 * the LLM critic again.
 */
const REVIEW_TRIES = 3;

function noLedger(runId: string): NotFoundError {
  return new NotFoundError(`no ledger for run "${runId}": open one with ledger.open first`, { runId });
}

function stillMoving(key: LedgerKey, tries: number, err: StreamWriteConflict): ConflictError {
  return new ConflictError(`the ledger of run "${key.runId}" kept changing under concurrent writes (${tries} tries): send the request again`, {
    runId: key.runId,
    version: err.expectedVersion,
  });
}

function overtaken(key: LedgerKey, tries: number, err: StreamWriteConflict): ConflictError {
  return new ConflictError(`other completion attempts of run "${key.runId}" were reviewed while this one was (${tries} tries): read the latest outcome with ledger.get, or propose again`, {
    runId: key.runId,
    version: err.expectedVersion,
  });
}

/**
 * Postgres text and jsonb cannot hold U+0000; refusing it here gives the
 * caller a 400 naming the field instead of a failed write.
 */
function rejectNulCharacters(value: unknown, path = ''): void {
  const issues: FieldIssue[] = [];
  const walk = (v: unknown, p: string) => {
    if (typeof v === 'string') {
      if (v.includes('\u0000')) issues.push({ path: p || '(root)', message: 'must not contain NUL characters (\\u0000)' });
    } else if (Array.isArray(v)) v.forEach((item, i) => walk(item, p ? `${p}.${i}` : String(i)));
    else if (v !== null && typeof v === 'object') for (const [k, item] of Object.entries(v)) walk(item, p ? `${p}.${k}` : k);
  };
  walk(value, path);
  if (issues.length) throw new BadInputError(`text fields must not contain NUL characters: remove them from ${issues.map((i) => i.path).join(', ')}`, issues);
}

export function createLedgerCommands(deps: LedgerCommandDeps): LedgerCommands {
  const { pool, metrics, critic } = deps;
  const cache = deps.cache ?? new LedgerCache();
  const now = () => (deps.now ? deps.now() : new Date()).toISOString();

  /**
   * Decides on the current state and appends, with the job's result recorded
   * in the same transaction, so a re-run of the job returns that result
   * instead of appending again.
   */
  async function write<R>(
    key: LedgerKey,
    job: { jobId: string; operation: string },
    decide: (state: LedgerState | undefined) => { events: LedgerEvent[]; state: LedgerState; result: R; observations?: readonly StoredObservation[] },
  ): Promise<R> {
    return writeStreamJob({
      pool,
      store: ledgerStream,
      cache,
      logger: deps.logger,
      key,
      job,
      decide: (_tx, current) => decide(current),
      append: async (tx, decision, expectedVersion, processedJob) => {
        const appended = await appendEvents(tx, key, expectedVersion, decision.events, decision.state, { processedJob });
        // The features of recorded evidence commit with it or not at all.
        if (decision.observations) await saveObservations(tx, key, decision.observations);
        return appended;
      },
      tries: WRITE_TRIES,
      gaveUp: (err, tries) => stillMoving(key, tries, err),
    });
  }

  /** The ledger's committed state, through the cache; undefined when the run has no ledger. */
  async function load(key: LedgerKey): Promise<LedgerState | undefined> {
    const state = await loadCommitted(pool, key, await readHead(pool, key), cache.get(key));
    if (state) cache.remember(key, state);
    return state;
  }

  async function read(tenant: string, runId: string): Promise<LedgerState> {
    const state = await load({ tenant, runId });
    if (!state) throw noLedger(runId);
    return state;
  }

  /**
   * Plans a review, reading from ledger_observations only what it needs: the
   * index keys of the evidence it sees, then the features of the candidates
   * it judges. Items with no current row (recorded before the table existed,
   * or read by an older FEATURES_VERSION) are read again from their summary,
   * and their rows filled in for the next review.
   */
  async function planReview(key: LedgerKey, state: LedgerState | undefined, cmd: ProposeCompletionCommand): Promise<ReviewPlan> {
    const start = draftCompletionReview(state, cmd);
    if (start.kind === 'already_reviewed') return start;
    const { draft } = start;
    const { evidence } = draft.ledger;
    const stored = currentKeys(evidence.length, await readObservationKeys(pool, key, evidence.length));
    const rebuilt = observeEvidence(stored.stale.map((seq) => evidence[seq - 1] as (typeof evidence)[number]));
    if (rebuilt.length) {
      await saveObservations(pool, key, rebuilt);
      deps.logger?.info({ runId: key.runId, items: rebuilt.length }, 'rebuilt the stored features of evidence recorded without them');
    }
    const features = new Map<number, ObservationFeatures>(rebuilt.map((o) => [o.seq, o.features]));
    const keys = stored.keys.map((k, i) => k ?? (features.get(i + 1) as ObservationFeatures).k);
    const found = findReviewCandidates(draft, keys);
    const wanted = found.seqs.filter((seq) => !features.has(seq));
    for (const o of currentFeatures(evidence, wanted, await readObservations(pool, key, wanted))) features.set(o.seq, o.features);
    return { kind: 'review', review: planCompletionReview(draft, found, features, { llmConfigured: critic.configured }) };
  }

  function countReview(outcome: CritiqueOutcome, claims: ReadonlyArray<{ status: string }>, llm: LlmCriticResult, seconds: number): void {
    metrics.critiques.inc({ decision: outcome.decision });
    if (isClosed(outcome.status)) metrics.terminalStatus.inc({ status: outcome.status });
    for (const claim of claims) metrics.claims.inc({ status: claim.status });
    // Calls the critic made are counted by the critic itself, failures included.
    if (!llm.ran) metrics.llmCriticCalls.inc({ outcome: 'skipped' });
    metrics.critiqueDuration.observe(seconds);
  }

  /**
   * The caller's open items plus the bound board's unverified and blocked
   * cards (a card the caller already listed by ref is not listed twice),
   * within the open-items bound: past it, one item says how many more.
   */
  async function withBoardItems(tenant: string, boardId: string, given: OpenItem[]): Promise<OpenItem[]> {
    const fromBoard = deps.boardOpenItems
      ? await deps.boardOpenItems(tenant, boardId)
      : [{ kind: 'board_card' as const, text: `board "${boardId}" is bound to this run, but this ledger-critic cannot read boards: its cards could not be checked` }];
    const listed = new Set(given.flatMap((item) => (item.ref ? [item.ref] : [])));
    const extra = fromBoard.filter((item) => !item.ref || !listed.has(item.ref));
    const room = LEDGER_LIMITS.openItems - given.length;
    if (extra.length <= room) return [...given, ...extra];
    const kept = extra.slice(0, Math.max(0, room - 1));
    return [...given, ...kept, { kind: 'board_card', text: `and ${extra.length - kept.length} more cards of board "${boardId}" that are not verified` }];
  }

  return {
    async open(caller, input) {
      rejectNulCharacters(input);
      const key = { tenant: caller.tenant, runId: input.runId };
      return write(key, { jobId: caller.jobId, operation: ledgerOpen.name }, (state) => {
        const decision = openLedger(state, { runId: input.runId, goal: input.goal, policy: input.policy, cycleBudget: input.cycleBudget ?? deps.cycleBudget, boardId: input.boardId, at: now() });
        return { ...decision, result: { ...toLedgerView(decision.state), alreadyOpened: decision.alreadyOpened } };
      });
    },

    async recordEvidence(caller, input) {
      rejectNulCharacters(input);
      const key = { tenant: caller.tenant, runId: input.runId };
      // Read before the ledger is locked: a large batch takes a while to read, and the features depend on nothing in the ledger.
      const features = input.items.map((item) => extractObservationFeatures(item.summary, item.toolName));
      return write(key, { jobId: caller.jobId, operation: ledgerRecordEvidence.name }, (state) => {
        const decision = recordEvidence(state, { runId: input.runId, items: input.items, at: now(), features });
        const result = { runId: input.runId, status: decision.state.status, version: decision.state.version, recorded: decision.recorded, evidenceCount: decision.state.evidence.length };
        return { ...decision, events: attributeEvents(decision.events, caller.actor?.agent), result };
      });
    },

    async proposeCompletion(caller, input) {
      rejectNulCharacters(input);
      const key = { tenant: caller.tenant, runId: input.runId };
      const started = performance.now();
      for (let tries = 1; ; tries++) {
        const state = await load(key);
        const openItems = state?.boardId ? await withBoardItems(caller.tenant, state.boardId, input.openItems) : input.openItems;
        // The proposal id is the job id: a re-run of this job finds its review recorded and gets it back.
        const plan = await planReview(key, state, {
          runId: input.runId,
          proposalId: caller.jobId,
          summary: input.summary,
          visibleAnswer: input.visibleAnswer,
          openItems,
          at: now(),
        });
        if (plan.kind === 'already_reviewed') return plan.outcome;
        const { review } = plan;
        // The LLM call runs outside any transaction: it may take a minute.
        const llm: LlmCriticResult = !review.llm.run
          ? { ran: false, note: review.llm.reason }
          : review.prompt
            ? await critic.review(review.prompt)
            : { ran: false, note: 'the review built no critic prompt' };
        try {
          const concluded = await withTransaction(pool, async (tx) => {
            const current = await loadCommitted(tx, key, await readHead(tx, key, { lock: true }), cache.get(key));
            if (!current) throw ledgerStream.conflict(key, review.baseVersion);
            // Evidence recorded meanwhile does not stale the review; another review concluded meanwhile does.
            const standing = reviewStanding(current, review);
            if (standing.kind === 'already_reviewed') return standing;
            if (standing.kind === 'superseded') throw ledgerStream.conflict(key, review.baseVersion);
            const concludedReview = concludeCompletionReview(current, review, llm, now());
            const decision = { ...concludedReview, events: attributeEvents(concludedReview.events, caller.actor?.agent) };
            const { snapshotDue } = await appendEvents(tx, key, current.version, decision.events, decision.state);
            return { kind: 'concluded' as const, ...decision, snapshotDue };
          });
          // A second run of this job (a stalled one re-run) concluded first: its review is the one recorded.
          if (concluded.kind === 'already_reviewed') return concluded.outcome;
          const committed = freezeApplied(concluded.state, concluded.events);
          cache.remember(key, committed);
          // A review that closes the ledger makes its final snapshot due: written now, after the commit, outside the head lock.
          if (concluded.snapshotDue) await ledgerStream.saveSnapshotAfterCommit(pool, key, committed, deps.logger);
          countReview(concluded.outcome, review.claims, llm, (performance.now() - started) / 1000);
          deps.logger?.info(
            { runId: input.runId, cycle: concluded.outcome.cycle, decision: concluded.outcome.decision, status: concluded.outcome.status, llm: llm.ran ? ('verdict' in llm ? 'answered' : 'failed') : 'skipped' },
            'completion reviewed',
          );
          return concluded.outcome;
        } catch (err) {
          if (!(err instanceof StreamWriteConflict)) throw err;
          if (tries >= REVIEW_TRIES) throw overtaken(key, tries, err);
        }
      }
    },

    async get(caller, input) {
      const page = ledgerGet.input.parse(input);
      return toLedgerView(await read(caller.tenant, page.runId), { after: page.evidenceAfter, limit: page.evidenceLimit });
    },

    async packet(caller, input) {
      const state = await read(caller.tenant, input.runId);
      const reviews = state.packets.length;
      if (reviews === 0) {
        throw new NotFoundError(`run "${input.runId}" has no review yet, so no critic packet: propose completion with ledger.proposeCompletion first`, { runId: input.runId });
      }
      const cycle = input.cycle ?? reviews;
      const packet = state.packets[cycle - 1];
      if (!packet) {
        throw new NotFoundError(`run "${input.runId}" has ${reviews} review${reviews === 1 ? '' : 's'}, so no packet for cycle ${cycle}: ask for cycle 1 to ${reviews}, or leave cycle out for the latest`, {
          runId: input.runId,
          reviews,
        });
      }
      const prompt = buildCriticPrompt(packet);
      return { runId: input.runId, cycle, packet, prompt: `${prompt.system}\n\n${prompt.user}` };
    },

    async render(caller, input) {
      return renderLedger(toLedgerSnapshot(await read(caller.tenant, input.runId)), input.form);
    },
  };
}

/** One handler per ledger operation, over the commands. */
export function ledgerHandlers(commands: LedgerCommands): OperationHandler[] {
  const caller = (ctx: HandlerContext): LedgerCaller => ({ tenant: ctx.tenant, jobId: ctx.jobId, actor: ctx.actor });
  return [
    handle(ledgerOpen, (input, ctx) => commands.open(caller(ctx), input)),
    handle(ledgerRecordEvidence, (input, ctx) => commands.recordEvidence(caller(ctx), input)),
    handle(ledgerProposeCompletion, (input, ctx) => commands.proposeCompletion(caller(ctx), input)),
    handle(ledgerGet, (input, ctx) => commands.get(ctx, input)),
    handle(ledgerPacket, (input, ctx) => commands.packet(ctx, input)),
    handle(ledgerRender, (input, ctx) => commands.render(ctx, input)),
  ] as OperationHandler[];
}
