import { randomBytes } from 'node:crypto';
import {
  BadInputError,
  BUILTIN_VERIFIER_AGENT,
  ConflictError,
  VouchError,
  actingAgent,
  boardAddCards,
  boardAttachEvidence,
  boardClaimCard,
  boardCreate,
  boardDiagnostics,
  boardHeartbeat,
  boardReviewCard,
  boardShow,
  boardSubmitCard,
  boardSynthesize,
  boardUpdateCard,
  requireActor,
  type Actor,
  type BoardSummary,
  type Diagnostic,
} from '@vouch/contracts';
import { handle, writeStreamJob, type HandlerContext, type Logger, type OperationHandler, type Pool, type Queryable } from '@vouch/platform';
import type { z } from 'zod';
import { BoardCache } from './board-cache.js';
import type { BoardNotifications } from './board-notifications.js';
import {
  appendEvents,
  boardStream,
  claimExpiry,
  claimableDispatches,
  extendClaim,
  lockClaimLease,
  listDiagnostics,
  loadCommitted,
  readHead,
  recordDiagnostic,
  touchConsumer,
  type BoardKey,
} from './board-store.js';
import { readLease } from './dispatcher-lease.js';
import {
  addCards,
  attachEvidence,
  claimCard,
  claimLeaseExpired,
  createBoard,
  findCard,
  noBoard,
  requireClaim,
  requireClaimHolder,
  reviewCard,
  reviewableCard,
  submitCard,
  updateCard,
  type ClaimLease,
  type Decision,
} from './domain/board-commands.js';
import { completionWithoutEvidenceFinding, unknownCardFinding } from './domain/diagnose-board.js';
import { byUrgency, renderBoardText } from './domain/render-board.js';
import { countByStatus, publicCard, type BoardState } from './domain/replay-board.js';
import { cardWithinBytes, showBoardPage } from './domain/show-board.js';
import { synthesizeBoard } from './domain/synthesize-board.js';
import { leaderStatus, noLeaderDiagnostic } from './domain/leader-status.js';
import { mergeVerdicts, verifierPlan, type SecondOpinion } from './domain/verifier-verdict.js';
import { ruleVerify } from './domain/verify-card.js';
import type { LlmVerifier } from './llm-verifier.js';

/**
 * The board operations. A write locks the board's head, brings the state up
 * to it (cache, or snapshot plus events), decides with the pure domain, and
 * appends the events at the version it read, with the job's result, in one
 * transaction. A refusal (a typed 4xx) changes nothing; one that names an
 * unknown card or a completion without evidence is stored as a diagnostic.
 */

export interface BoardCaller {
  tenant: string;
  /** The job id: the same request across BullMQ re-runs. */
  jobId: string;
  /**
   * Who acts: the agent of the caller's API key (the job envelope's actor).
   * A body that names an agent (`by`, a claim's `assignee`, `reviewer`) must
   * name this one; the events record this one.
   */
  actor: Actor;
}

export interface BoardCommandDeps {
  pool: Pool;
  verifier: LlmVerifier;
  /** Wakes in-process waiting claims when work is dispatched; polling alone without it. */
  notifications?: BoardNotifications;
  logger?: Logger;
  now?: () => Date;
  cache?: BoardCache;
  /** An in-process waiting claim looks for work at least this often. */
  claimPollMs: number;
  /** The dispatcher lease TTL, to tell a missing leader from a moment between leases. */
  leaseTtlMs: number;
}

type Input<Op extends { input: z.ZodType }> = z.output<Op['input']>;
type Output<Op extends { output: z.ZodType }> = z.output<Op['output']>;
/** board.create's input; an in-process caller may leave visibility out, as the operation's default does (admin). */
type CreateInput = Omit<Input<typeof boardCreate>, 'visibility'> & Partial<Pick<Input<typeof boardCreate>, 'visibility'>>;

export interface BoardCommands {
  create(caller: Pick<BoardCaller, 'tenant' | 'jobId'> & Partial<Pick<BoardCaller, 'actor'>>, input: CreateInput): Promise<Output<typeof boardCreate>>;
  addCards(caller: BoardCaller, input: Input<typeof boardAddCards>): Promise<Output<typeof boardAddCards>>;
  updateCard(caller: BoardCaller, input: Input<typeof boardUpdateCard>): Promise<Output<typeof boardUpdateCard>>;
  attachEvidence(caller: BoardCaller, input: Input<typeof boardAttachEvidence>): Promise<Output<typeof boardAttachEvidence>>;
  /**
   * Claims the next card dispatched to the caller's agent, waiting up to `waitSeconds` for one. Only in-process
   * callers (tests, the bench) wait here: the queue handler passes 0, and the gateway waits instead.
   */
  claimCard(caller: BoardCaller, input: Input<typeof boardClaimCard>, signal?: AbortSignal): Promise<Output<typeof boardClaimCard>>;
  heartbeat(caller: BoardCaller, input: Input<typeof boardHeartbeat>): Promise<Output<typeof boardHeartbeat>>;
  submitCard(caller: BoardCaller, input: Input<typeof boardSubmitCard>): Promise<Output<typeof boardSubmitCard>>;
  reviewCard(caller: BoardCaller, input: Input<typeof boardReviewCard>): Promise<Output<typeof boardReviewCard>>;
  show(caller: Pick<BoardCaller, 'tenant'>, input: Input<typeof boardShow>): Promise<Output<typeof boardShow>>;
  diagnostics(caller: Pick<BoardCaller, 'tenant'>, input: Input<typeof boardDiagnostics>): Promise<Output<typeof boardDiagnostics>>;
  synthesize(caller: Pick<BoardCaller, 'tenant'>, input: Input<typeof boardSynthesize>): Promise<Output<typeof boardSynthesize>>;
  /** The committed state of a board (through the cache). */
  load(key: BoardKey): Promise<BoardState | undefined>;
}

const WRITE_TRIES = 5;

export function boardSummary(state: BoardState): BoardSummary {
  return {
    boardId: state.boardId,
    title: state.title,
    goal: state.goal,
    scope: state.scope,
    owner: state.owner,
    visibility: state.visibility,
    status: state.status,
    policy: state.policy,
    version: state.version,
    counts: countByStatus(state),
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
  };
}

/** A claim token: 128 random bits, URL-safe. */
export function newClaimToken(): string {
  return `ct_${randomBytes(16).toString('base64url')}`;
}

export function createBoardCommands(deps: BoardCommandDeps): BoardCommands {
  const { pool } = deps;
  const cache = deps.cache ?? new BoardCache();
  const now = () => (deps.now ? deps.now() : new Date()).toISOString();

  /**
   * Decides on the current state and appends with the job's result; a re-run of the job returns that result.
   * `readAlso` reads, in the same transaction, what else the decision rests on (a claim's lease).
   */
  async function write<R, X = undefined>(
    key: BoardKey,
    job: { jobId: string; operation: string },
    decide: (state: BoardState | undefined, also: X) => Decision & { result: (state: BoardState) => R },
    readAlso?: (tx: Queryable, state: BoardState | undefined) => Promise<X>,
  ): Promise<R> {
    return writeStreamJob({
      pool,
      store: boardStream,
      cache,
      logger: deps.logger,
      key,
      job,
      decide: async (tx, current) => {
        const decision = decide(current, (readAlso ? await readAlso(tx, current) : undefined) as X);
        return { events: decision.events, state: decision.state, result: decision.result(decision.state) };
      },
      append: (tx, decision, expectedVersion, processedJob) => appendEvents(tx, key, expectedVersion, decision.events, decision.state, { processedJob }),
      tries: WRITE_TRIES,
      gaveUp: (err, tries) => new ConflictError(`board "${key.boardId}" kept changing under concurrent writes (${tries} tries): send the request again`, { boardId: key.boardId, version: err.expectedVersion }),
    });
  }

  async function load(key: BoardKey): Promise<BoardState | undefined> {
    const state = await loadCommitted(pool, key, await readHead(pool, key), cache.get(key));
    if (state) cache.remember(key, state);
    return state;
  }

  async function read(tenant: string, boardId: string): Promise<BoardState> {
    const state = await load({ tenant, boardId });
    if (!state) throw noBoard(boardId);
    return state;
  }

  /**
   * Stores the diagnostic a refusal names (a hallucinated card id, a
   * completion without evidence), then lets the refusal go on to the caller.
   * The refusal changed nothing on the board; the diagnostic is its record.
   */
  async function diagnosed<R>(key: BoardKey, operation: string, run: () => Promise<R>): Promise<R> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof VouchError && err.httpStatus < 500 && err.details) {
        const state = await load(key).catch(() => undefined);
        if (state) {
          const unknown = (err.details.unknownCardIds as string[] | undefined) ?? [];
          for (const id of unknown) await recordDiagnostic(pool, key, unknownCardFinding(state, id, operation), { bump: true }).catch((e: unknown) => deps.logger?.warn({ err: e }, 'could not record a diagnostic'));
          const card = typeof err.details.cardId === 'string' ? findCard(state, err.details.cardId) : undefined;
          if (err.details.diagnostic === 'completion_without_evidence' && card) {
            await recordDiagnostic(pool, key, completionWithoutEvidenceFinding(card), { bump: true }).catch((e: unknown) => deps.logger?.warn({ err: e }, 'could not record a diagnostic'));
          }
        }
      }
      throw err;
    }
  }

  // Bounded by bytes: a card with a full load of evidence would pass the cap on one job result (show-board.ts).
  const cardOut = (state: BoardState, cardId: string) => cardWithinBytes(publicCard(state.cards[cardId]!));

  return {
    load,

    async create(caller, input) {
      const key = { tenant: caller.tenant, boardId: input.boardId };
      // The owner is named, or it is the agent of the caller's key.
      const owner = input.owner ?? caller.actor?.agent;
      if (owner === undefined) throw new BadInputError('owner is required: name the board\'s owner, or call with an agent\'s key', [{ path: 'owner', message: 'name the agent or person that owns the board' }]);
      let alreadyCreated = false;
      return write(key, { jobId: caller.jobId, operation: boardCreate.name }, (state) => {
        const d = createBoard(state, { boardId: input.boardId, title: input.title, goal: input.goal, scope: input.scope, owner, policy: input.policy, visibility: input.visibility, at: now() });
        alreadyCreated = d.alreadyCreated;
        return { ...d, result: (s) => ({ ...boardSummary(s), alreadyCreated }) };
      });
    },

    async addCards(caller, input) {
      const by = actingAgent(caller.actor, 'by', input.by);
      const key = { tenant: caller.tenant, boardId: input.boardId };
      return diagnosed(key, boardAddCards.name, () =>
        write(key, { jobId: caller.jobId, operation: boardAddCards.name }, (state) => {
          const d = addCards(state, input.boardId, { by, cards: input.cards, splitFrom: input.splitFrom, reason: input.reason, at: now() });
          return { ...d, result: (s) => ({ boardId: input.boardId, version: s.version, cards: d.added }) };
        }),
      );
    },

    async updateCard(caller, input) {
      const by = actingAgent(caller.actor, 'by', input.by);
      const key = { tenant: caller.tenant, boardId: input.boardId };
      return diagnosed(key, boardUpdateCard.name, () =>
        write(key, { jobId: caller.jobId, operation: boardUpdateCard.name }, (state) => {
          const d = updateCard(state, input.boardId, { ...input, by, at: now() });
          const id = findCard(d.state, input.cardId)!.id;
          return { ...d, result: (s) => ({ boardId: input.boardId, version: s.version, card: cardOut(s, id) }) };
        }),
      );
    },

    async attachEvidence(caller, input) {
      const by = actingAgent(caller.actor, 'by', input.by);
      const key = { tenant: caller.tenant, boardId: input.boardId };
      return diagnosed(key, boardAttachEvidence.name, () =>
        write(key, { jobId: caller.jobId, operation: boardAttachEvidence.name }, (state) => {
          const d = attachEvidence(state, input.boardId, { cardId: input.cardId, by, items: input.items, at: now() });
          const id = findCard(d.state, input.cardId)!.id;
          return { ...d, result: (s) => ({ boardId: input.boardId, cardId: id, version: s.version, attached: d.attached.map((e) => ({ id: e })), evidenceCount: s.cards[id]!.evidence.length }) };
        }),
      );
    },

    async claimCard(caller, input, signal) {
      const prior = await boardStream.findProcessedJob(pool, caller.tenant, caller.jobId);
      if (prior !== undefined) return prior as Output<typeof boardClaimCard>;
      // A worker claims only the work dispatched to its own key's agent: claiming as another is a 403 before anything is touched.
      const assignee = actingAgent(caller.actor, 'assignee', input.assignee, 'claim');
      await touchConsumer(pool, caller.tenant, assignee);
      const deadline = Date.now() + input.waitSeconds * 1000;
      for (;;) {
        for (const candidate of await claimableDispatches(pool, caller.tenant, assignee, input.boardId)) {
          const key = { tenant: caller.tenant, boardId: candidate.boardId };
          const claimToken = newClaimToken();
          try {
            const claimed = await write(key, { jobId: caller.jobId, operation: boardClaimCard.name }, (state) => {
              const d = claimCard(state, candidate.boardId, { cardId: candidate.cardId, attempt: candidate.attempt, claimToken, by: assignee, at: now() });
              return {
                ...d,
                result: (s) => ({
                  claimed: true,
                  boardId: candidate.boardId,
                  card: cardOut(s, candidate.cardId),
                  claimToken: s.cards[candidate.cardId]!.claim!.token,
                  attempt: candidate.attempt,
                  leaseSeconds: s.policy.claimTtlSeconds,
                }),
              };
            });
            const expiresAt = await claimExpiry(pool, key, candidate.cardId);
            return { ...claimed, ...(expiresAt ? { leaseExpiresAt: expiresAt } : {}) };
          } catch (err) {
            // Another claimer took it first, or it was revoked meanwhile: try the next one.
            if (err instanceof ConflictError) continue;
            throw err;
          }
        }
        const left = deadline - Date.now();
        if (left <= 0 || signal?.aborted) return { claimed: false };
        if (deps.notifications) await deps.notifications.waitForDispatch(caller.tenant, assignee, Math.min(left, deps.claimPollMs), signal);
        else await new Promise((r) => setTimeout(r, Math.min(left, deps.claimPollMs)));
      }
    },

    async heartbeat(caller, input) {
      const key = { tenant: caller.tenant, boardId: input.boardId };
      return diagnosed(key, boardHeartbeat.name, async () => {
        const state = await load(key);
        const card = requireClaimHolder(requireClaim(state, input.boardId, input.cardId, input.claimToken, 'heartbeating'), caller.actor.agent, 'heartbeat');
        // The lease is checked in the statement that extends it: one that ran out is refused even before the sweep ends it.
        const extension = await extendClaim(pool, key, card.id, input.claimToken, state!.policy.claimTtlSeconds);
        if (extension && 'expiredAt' in extension) throw claimLeaseExpired(state!, card, extension.expiredAt, 'heartbeating');
        if (!extension) {
          // The claim ended between the read and the extension: answer from the board as it is now.
          requireClaim(await load(key), input.boardId, input.cardId, input.claimToken, 'heartbeating');
          throw new ConflictError(`the claim on card ${card.id} just ended: call board.claimCard for new work`, { cardId: card.id });
        }
        return { boardId: input.boardId, cardId: card.id, status: card.status, leaseExpiresAt: extension.extendedTo };
      });
    },

    async submitCard(caller, input) {
      const key = { tenant: caller.tenant, boardId: input.boardId };
      return diagnosed(key, boardSubmitCard.name, () =>
        write(
          key,
          { jobId: caller.jobId, operation: boardSubmitCard.name },
          (state, lease: ClaimLease | null | undefined) => {
            const d = submitCard(state, input.boardId, { cardId: input.cardId, claimToken: input.claimToken, by: caller.actor.agent, outcome: input.outcome, summary: input.summary, evidence: input.evidence, lease, at: now() });
            const id = findCard(d.state, input.cardId)!.id;
            // No events: a retry of the submission already recorded (recordedSubmission), answered as the success it was.
            return { ...d, result: (s) => ({ boardId: input.boardId, version: s.version, card: cardOut(s, id), alreadySubmitted: d.events.length === 0 }) };
          },
          // The lease is checked in the transaction that uses it, by the database's clock: a submission after it ran out is refused even before the sweep ends it.
          async (tx, state) => {
            const card = state && findCard(state, input.cardId);
            return card ? ((await lockClaimLease(tx, key, card.id, input.claimToken)) ?? null) : undefined;
          },
        ),
      );
    },

    async reviewCard(caller, input) {
      const reviewer = actingAgent(caller.actor, 'reviewer', input.reviewer, 'review');
      const key = { tenant: caller.tenant, boardId: input.boardId };
      return diagnosed(key, boardReviewCard.name, async () => {
        if (input.decision !== 'auto') {
          return write(key, { jobId: caller.jobId, operation: boardReviewCard.name }, (state) => {
            const d = reviewCard(state, input.boardId, { cardId: input.cardId, reviewer, decision: input.decision as 'approve' | 'request_changes', missing: input.missing, notes: input.notes, at: now() });
            const id = findCard(d.state, input.cardId)!.id;
            const reasons = input.decision === 'approve' ? ruleVerify(d.state.cards[id]!).reasons : input.missing.map((m) => `missing: ${m}`);
            return { ...d, result: (s) => ({ boardId: input.boardId, version: s.version, card: cardOut(s, id), decision: input.decision as 'approve' | 'request_changes', reasons }) };
          });
        }
        // The built-in verifier: the rule check, then (only if it approves) the LLM's second opinion, outside any transaction.
        const prior = await boardStream.findProcessedJob(pool, caller.tenant, caller.jobId);
        if (prior !== undefined) return prior as Output<typeof boardReviewCard>;
        const state = await load(key);
        // The submitter's own key asking the verifier is no independent review either: refused before the verifier runs.
        const { card, rule } = reviewableCard(state, input.boardId, { cardId: input.cardId, reviewer: BUILTIN_VERIFIER_AGENT, requestedBy: reviewer, decision: 'request_changes' });
        // The model is asked when the rules approve (it may object) or when nothing contradicts what they could not see (it may
        // show a requirement with a quote the judge checks); a contradicted requirement is never argued away (verifier-verdict.ts).
        const plan = verifierPlan(rule, deps.verifier.configured);
        const llm: SecondOpinion = plan.ask ? await deps.verifier.review(card) : plan.opinion;
        const { decision, missing, reasons, quotes, verifier } = mergeVerdicts(card, rule, llm);
        return write(key, { jobId: caller.jobId, operation: boardReviewCard.name }, (current) => {
          const d = reviewCard(current, input.boardId, {
            cardId: card.id,
            reviewer: BUILTIN_VERIFIER_AGENT,
            requestedBy: reviewer,
            decision,
            missing,
            notes: input.notes || `built-in verifier, asked by ${reviewer}`,
            ...(quotes ? { quotes } : {}),
            verifier,
            at: now(),
          });
          return { ...d, result: (s) => ({ boardId: input.boardId, version: s.version, card: cardOut(s, card.id), decision, reasons }) };
        });
      });
    },

    async show(caller, input) {
      const state = await read(caller.tenant, input.boardId);
      return showBoardPage({ board: boardSummary(state), text: renderBoardText(state), decisions: state.decisions.slice(-50) }, byUrgency(state), input);
    },

    async diagnostics(caller, input) {
      const key = { tenant: caller.tenant, boardId: input.boardId };
      await read(caller.tenant, input.boardId);
      const [stored, lease] = await Promise.all([listDiagnostics(pool, key, input.includeResolved), readLease(pool)]);
      const noLeader = noLeaderDiagnostic(lease, deps.leaseTtlMs);
      const diagnostics: Diagnostic[] = noLeader ? [noLeader, ...stored] : [...stored];
      return { boardId: input.boardId, diagnostics, leader: leaderStatus(lease) };
    },

    async synthesize(caller, input) {
      const state = await read(caller.tenant, input.boardId);
      return { boardId: input.boardId, ...synthesizeBoard(state, input.form) };
    },
  };
}

/** One handler per board operation, over the commands. */
export function boardHandlers(commands: BoardCommands): OperationHandler[] {
  /** A write that acts as an agent: the key's, from the job envelope; a job without one is refused. */
  const caller = (ctx: HandlerContext): BoardCaller => ({ tenant: ctx.tenant, jobId: ctx.jobId, actor: requireActor(ctx.actor, ctx.operation) });
  return [
    handle(boardCreate, (input, ctx) => commands.create({ tenant: ctx.tenant, jobId: ctx.jobId, ...(ctx.actor ? { actor: ctx.actor } : {}) }, input)),
    handle(boardAddCards, (input, ctx) => commands.addCards(caller(ctx), input)),
    handle(boardUpdateCard, (input, ctx) => commands.updateCard(caller(ctx), input)),
    handle(boardAttachEvidence, (input, ctx) => commands.attachEvidence(caller(ctx), input)),
    // A claim's job looks once and answers, however long the caller may wait: a job that waited would hold a worker
    // slot doing nothing (70 waiting claims once held every slot, and another tenant's board.show took 23 s). The
    // gateway does the waiting, and sends this job again when work is announced (services/gateway/src/claim-waits.ts).
    handle(boardClaimCard, (input, ctx) => commands.claimCard(caller(ctx), { ...input, waitSeconds: 0 })),
    handle(boardHeartbeat, (input, ctx) => commands.heartbeat(caller(ctx), input)),
    handle(boardSubmitCard, (input, ctx) => commands.submitCard(caller(ctx), input)),
    handle(boardReviewCard, (input, ctx) => commands.reviewCard(caller(ctx), input)),
    handle(boardShow, (input, ctx) => commands.show(ctx, input)),
    handle(boardDiagnostics, (input, ctx) => commands.diagnostics(ctx, input)),
    handle(boardSynthesize, (input, ctx) => commands.synthesize(ctx, input)),
  ] as OperationHandler[];
}
