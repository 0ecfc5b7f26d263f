import {
  BOARD_LIMITS,
  BadInputError,
  ConflictError,
  DISPATCHER_AGENT,
  ForbiddenError,
  NotFoundError,
  type BlockReason,
  type BoardEvidence,
  type BoardEvidenceInput,
  type BoardPolicy,
  type BoardScope,
  type BoardVisibility,
  type CardPriority,
  type CardReview,
  type CardStatus,
  type FieldIssue,
  type NewCard,
} from '@vouch/contracts';
import type { BoardEvent, CardChanges } from './board-events.js';
import { assertTransition, describeAllowed, isTerminal, type TransitionTrigger } from './card-transitions.js';
import { closestIds } from './closest-ids.js';
import { dependencyGraph, dependenciesVerified, dependentsOf, findCycle } from './dependency-graph.js';
import { BoardBatch, type BoardState, type CardState } from './replay-board.js';
import { ruleVerify, supportByQuotes, type QuotedRequirement, type RuleVerdict } from './verify-card.js';

/**
 * Commands decide, from the current state and a validated input, which events
 * to append, or refuse with a typed error that changes nothing. A handler
 * loads the state, calls one of these, and appends the events in one
 * transaction at the state's version.
 */

export interface Decision {
  events: BoardEvent[];
  /** The state after the events. */
  state: BoardState;
}

function done(batch: BoardBatch): Decision {
  const state = batch.finish();
  if (!state) throw new Error('a command produced no board');
  return { events: batch.events, state };
}

export function noBoard(boardId: string): NotFoundError {
  return new NotFoundError(`no board "${boardId}": create it with board.create first (board ids are per tenant)`, { boardId });
}

export function requireBoard(state: BoardState | undefined, boardId: string): BoardState {
  if (!state) throw noBoard(boardId);
  return state;
}

/**
 * A card id that is not on the board: 404 naming the closest real ids. The
 * details carry the unknown id so the handler records the hallucinated-id
 * diagnostic.
 */
export function unknownCard(state: BoardState, cardId: string, field = 'cardId'): NotFoundError {
  const suggestions = closestIds(cardId, [...state.order, ...Object.keys(state.keys)]);
  const hint = suggestions.length ? `did you mean ${suggestions.join(', ')}?` : 'the board has no cards yet: add them with board.addCards';
  return new NotFoundError(`board "${state.boardId}" has no card "${cardId}" (${field}): ${hint} List the cards with board.show.`, {
    boardId: state.boardId,
    field,
    unknownCardIds: [cardId],
    suggestions,
  });
}

/** A card by id, or by its client key. */
export function findCard(state: BoardState, ref: string): CardState | undefined {
  return state.cards[ref] ?? (state.keys[ref] !== undefined ? state.cards[state.keys[ref]] : undefined);
}

export function requireCard(state: BoardState, cardId: string): CardState {
  const card = findCard(state, cardId);
  if (!card) throw unknownCard(state, cardId);
  return card;
}

// ---------------------------------------------------------------- board.create

export interface CreateBoardCommand {
  boardId: string;
  title: string;
  goal: string;
  scope: BoardScope;
  owner: string;
  policy: BoardPolicy;
  /** admin when left out. */
  visibility?: BoardVisibility;
  at: string;
}

/** Creates a board. Creating it again with the same title, scope, owner and visibility is a no-op that returns it. */
export function createBoard(state: BoardState | undefined, cmd: CreateBoardCommand): Decision & { alreadyCreated: boolean } {
  if (state) {
    // A public board asked for again as admin (or the reverse) is another board: answering with it would change who its answer is for.
    const same =
      state.title === cmd.title && state.owner === cmd.owner && state.scope.kind === cmd.scope.kind && state.scope.ref === cmd.scope.ref && state.visibility === (cmd.visibility ?? 'admin');
    if (same) return { events: [], state, alreadyCreated: true };
    throw new ConflictError(`board "${cmd.boardId}" already exists with another title, scope, owner or visibility: choose another boardId, or read this one with board.show`, {
      boardId: cmd.boardId,
      version: state.version,
    });
  }
  const batch = new BoardBatch(undefined);
  batch.emit({ type: 'board_created', at: cmd.at, boardId: cmd.boardId, title: cmd.title, goal: cmd.goal, scope: cmd.scope, owner: cmd.owner, policy: cmd.policy, visibility: cmd.visibility ?? 'admin' });
  return { ...done(batch), alreadyCreated: false };
}

// ---------------------------------------------------------------- board.addCards

export interface AddCardsCommand {
  by: string;
  cards: NewCard[];
  splitFrom?: string | undefined;
  reason?: string | undefined;
  at: string;
}

export function addCards(current: BoardState | undefined, boardId: string, cmd: AddCardsCommand): Decision & { added: Array<{ key: string | null; id: string; status: CardStatus }> } {
  const state = requireBoard(current, boardId);
  if (state.order.length + cmd.cards.length > BOARD_LIMITS.cardsPerBoard) {
    throw new BadInputError(`board "${boardId}" holds ${state.order.length} cards and takes at most ${BOARD_LIMITS.cardsPerBoard}: split the work across boards, or cancel cards you no longer need`, [
      { path: 'cards', message: `at most ${BOARD_LIMITS.cardsPerBoard - state.order.length} more cards fit` },
    ]);
  }

  // Ids first, so dependencies can name cards of this batch by key.
  const issues: FieldIssue[] = [];
  const idOfKey = new Map<string, string>();
  const ids = cmd.cards.map((card, i) => {
    const id = `c-${state.order.length + i + 1}`;
    if (card.key !== undefined) {
      if (idOfKey.has(card.key)) issues.push({ path: `cards.${i}.key`, message: `key "${card.key}" is used twice in this call: give each card its own key` });
      else if (findCard(state, card.key)) issues.push({ path: `cards.${i}.key`, message: `key "${card.key}" already names card ${findCard(state, card.key)!.id} on this board: use another key, or depend on that card` });
      idOfKey.set(card.key, id);
    }
    return id;
  });

  const unknown: string[] = [];
  const suggestions: Record<string, string[]> = {};
  const candidates = [...state.order, ...Object.keys(state.keys), ...idOfKey.keys()];
  const resolved = cmd.cards.map((card, i) =>
    card.dependsOn.map((ref, j) => {
      const id = idOfKey.get(ref) ?? findCard(state, ref)?.id;
      if (id === undefined) {
        unknown.push(ref);
        suggestions[ref] = closestIds(ref, candidates);
        const hint = suggestions[ref]!.length ? `did you mean ${suggestions[ref]!.join(', ')}?` : 'name a key of this call or a card on the board';
        issues.push({ path: `cards.${i}.dependsOn.${j}`, message: `no card "${ref}" in this call or on the board: ${hint}` });
      }
      return id ?? ref;
    }),
  );
  let parent: CardState | undefined;
  if (cmd.splitFrom !== undefined) {
    parent = findCard(state, cmd.splitFrom);
    if (!parent) {
      unknown.push(cmd.splitFrom);
      suggestions[cmd.splitFrom] = closestIds(cmd.splitFrom, [...state.order, ...Object.keys(state.keys)]);
      issues.push({ path: 'splitFrom', message: `no card "${cmd.splitFrom}" on the board${suggestions[cmd.splitFrom]!.length ? `: did you mean ${suggestions[cmd.splitFrom]!.join(', ')}?` : ''}` });
    }
  }
  if (issues.length) {
    throw new BadInputError(`board.addCards refused: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues, unknown.length ? { boardId, unknownCardIds: unknown, suggestions } : { boardId });
  }
  if (parent) assertTransition(parent, 'cancelled', 'split');

  // A split: whatever waited on the split card waits on all of its replacements.
  const rewired = new Map<string, string[]>();
  if (parent) {
    for (const dependent of dependentsOf(state, parent.id)) {
      if (isTerminal(dependent.status)) continue;
      rewired.set(dependent.id, [...new Set(dependent.dependsOn.flatMap((d) => (d === parent.id ? ids : [d])))]);
    }
  }
  const overrides = new Map<string, readonly string[]>([...rewired, ...ids.map((id, i) => [id, resolved[i]!] as const)]);
  const cycle = findCycle(dependencyGraph(state, overrides));
  if (cycle) {
    const label = (id: string) => {
      const i = ids.indexOf(id);
      return i >= 0 && cmd.cards[i]!.key ? `${id} (${cmd.cards[i]!.key})` : id;
    };
    const at = ids.findIndex((id) => cycle.includes(id));
    throw new BadInputError(`these dependencies make a cycle: ${cycle.map(label).join(' → ')}; a card on a cycle could never become ready. Remove one of the dependencies.`, [
      { path: at >= 0 ? `cards.${at}.dependsOn` : 'cards', message: `cycle ${cycle.map(label).join(' → ')}` },
    ]);
  }

  const batch = new BoardBatch(state);
  const added: Array<{ key: string | null; id: string; status: CardStatus }> = [];
  cmd.cards.forEach((card, i) => {
    const dependsOn = [...new Set(resolved[i]!)];
    const status = dependsOn.every((d) => state.cards[d]?.status === 'verified') ? 'ready' : 'todo';
    batch.emit({
      type: 'card_added',
      at: cmd.at,
      by: cmd.by,
      reason: cmd.reason ?? null,
      card: {
        id: ids[i]!,
        key: card.key ?? null,
        title: card.title,
        description: card.description,
        lane: card.lane,
        assignee: card.assignee ?? null,
        priority: card.priority,
        dependsOn,
        evidenceRequirements: card.evidenceRequirements.map((text, k) => ({ id: `r${k + 1}`, text })),
        deadline: card.deadline ?? null,
        status,
      },
    });
    added.push({ key: card.key ?? null, id: ids[i]!, status });
  });
  if (parent) {
    const why = cmd.reason ?? `split into ${ids.join(', ')}`;
    batch.emit({ type: 'card_transitioned', at: cmd.at, cardId: parent.id, from: parent.status, to: 'cancelled', trigger: 'split', blockReason: null, by: cmd.by, reason: why });
    for (const [id, dependsOn] of rewired) batch.emit({ type: 'card_updated', at: cmd.at, cardId: id, changes: { dependsOn }, by: cmd.by, reason: `${parent.id} was split into ${ids.join(', ')}` });
  }
  return { ...done(batch), added };
}

// ---------------------------------------------------------------- board.updateCard

export interface UpdateCardCommand {
  cardId: string;
  by: string;
  title?: string | undefined;
  description?: string | undefined;
  assignee?: string | null | undefined;
  priority?: CardPriority | undefined;
  deadline?: string | null | undefined;
  status?: CardStatus | undefined;
  blockReason?: BlockReason | undefined;
  reason?: string | undefined;
  at: string;
}

/** The trigger board.updateCard uses to reach each status; statuses missing here are reached by other operations. */
const UPDATE_TRIGGERS: Partial<Record<CardStatus, TransitionTrigger>> = { blocked: 'block', cancelled: 'cancel', ready: 'unblock', todo: 'unblock' };

export function updateCard(current: BoardState | undefined, boardId: string, cmd: UpdateCardCommand): Decision {
  const state = requireBoard(current, boardId);
  const card = requireCard(state, cmd.cardId);
  const changes: CardChanges = {};
  if (cmd.title !== undefined && cmd.title !== card.title) changes.title = cmd.title;
  if (cmd.description !== undefined && cmd.description !== card.description) changes.description = cmd.description;
  if (cmd.assignee !== undefined && cmd.assignee !== card.assignee) changes.assignee = cmd.assignee;
  if (cmd.priority !== undefined && cmd.priority !== card.priority) changes.priority = cmd.priority;
  if (cmd.deadline !== undefined && cmd.deadline !== card.deadline) changes.deadline = cmd.deadline;
  const fieldChange = Object.keys(changes).length > 0;
  if (fieldChange && isTerminal(card.status)) {
    throw new ConflictError(`card ${card.id} is ${card.status} and takes no more changes: add a new card with board.addCards for further work`, { cardId: card.id, status: card.status, allowed: [] });
  }

  let target: { to: CardStatus; trigger: TransitionTrigger } | undefined;
  if (cmd.status !== undefined) {
    const trigger = UPDATE_TRIGGERS[cmd.status];
    if (!trigger) {
      throw new ConflictError(`board.updateCard cannot move card ${card.id} to ${cmd.status}: from ${card.status} it can go to ${describeAllowed(card.status)}`, {
        cardId: card.id,
        status: card.status,
        requested: cmd.status,
        allowed: Object.keys(UPDATE_TRIGGERS),
      });
    }
    let to = cmd.status;
    if (trigger === 'unblock') {
      assertTransition(card, to, trigger);
      const waiting = card.dependsOn.filter((d) => state.cards[d]?.status !== 'verified');
      if (to === 'ready' && waiting.length > 0) {
        throw new ConflictError(
          `card ${card.id} waits on ${waiting.map((d) => `${d} (${state.cards[d]?.status ?? 'missing'})`).join(', ')}: unblock it with status todo; it becomes ready once they are verified`,
          { cardId: card.id, status: card.status, requested: to, allowed: ['todo', 'cancelled'] },
        );
      }
      // A card whose dependencies are all verified is ready, whatever the caller named.
      if (waiting.length === 0) to = 'ready';
    }
    assertTransition(card, to, trigger);
    target = { to, trigger };
  }
  if (!fieldChange && !target) return { events: [], state };

  const batch = new BoardBatch(state);
  const reason = cmd.reason ?? null;
  if (fieldChange) batch.emit({ type: 'card_updated', at: cmd.at, cardId: card.id, changes, by: cmd.by, reason });
  if (target) {
    batch.emit({ type: 'card_transitioned', at: cmd.at, cardId: card.id, from: card.status, to: target.to, trigger: target.trigger, blockReason: target.to === 'blocked' ? cmd.blockReason! : null, by: cmd.by, reason });
  } else if (changes.assignee !== undefined && (card.status === 'dispatched' || card.status === 'running')) {
    // Reassigned while out with the previous assignee: its dispatch or claim ends and the card waits for the new one.
    batch.emit({ type: 'card_transitioned', at: cmd.at, cardId: card.id, from: card.status, to: 'ready', trigger: 'reassign', blockReason: null, by: cmd.by, reason });
  }
  return done(batch);
}

// ---------------------------------------------------------------- evidence

export interface AttachEvidenceCommand {
  cardId: string;
  by: string;
  items: BoardEvidenceInput[];
  at: string;
}

function checkEvidence(state: BoardState, card: CardState, items: readonly BoardEvidenceInput[], field: string): BoardEvidence[] {
  if (card.evidence.length + items.length > BOARD_LIMITS.evidencePerCard) {
    throw new BadInputError(`card ${card.id} holds ${card.evidence.length} evidence items and takes at most ${BOARD_LIMITS.evidencePerCard}: attach a summary of the rest`, [
      { path: field, message: `at most ${BOARD_LIMITS.evidencePerCard - card.evidence.length} more fit` },
    ]);
  }
  const known = card.evidenceRequirements.map((r) => r.id);
  const issues: FieldIssue[] = [];
  items.forEach((item, i) =>
    (item.covers ?? []).forEach((id, j) => {
      if (!known.includes(id)) {
        issues.push({ path: `${field}.${i}.covers.${j}`, message: known.length ? `card ${card.id} has no requirement "${id}": its requirements are ${known.join(', ')}` : `card ${card.id} has no evidence requirements: leave covers out` });
      }
    }),
  );
  if (issues.length) throw new BadInputError(`evidence names requirements the card does not have: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  return items.map((item, i) => ({
    id: `e-${state.evidenceCount + i + 1}`,
    kind: item.kind,
    summary: item.summary,
    ...(item.ref !== undefined ? { ref: item.ref } : {}),
    covers: [...new Set(item.covers ?? [])],
    attachedBy: '',
    at: '',
  }));
}

function closedCard(card: CardState, what: string): ConflictError {
  return new ConflictError(`card ${card.id} is ${card.status} and takes no more ${what}: ${card.status === 'verified' ? 'it is done' : 'it was cancelled'}; add a new card with board.addCards for further work`, {
    cardId: card.id,
    status: card.status,
  });
}

export function attachEvidence(current: BoardState | undefined, boardId: string, cmd: AttachEvidenceCommand): Decision & { attached: string[] } {
  const state = requireBoard(current, boardId);
  const card = requireCard(state, cmd.cardId);
  if (isTerminal(card.status)) throw closedCard(card, 'evidence');
  const items = checkEvidence(state, card, cmd.items, 'items').map((e) => ({ ...e, attachedBy: cmd.by, at: cmd.at }));
  const batch = new BoardBatch(state);
  batch.emit({ type: 'evidence_attached', at: cmd.at, cardId: card.id, items, by: cmd.by });
  return { ...done(batch), attached: items.map((e) => e.id) };
}

// ---------------------------------------------------------------- dispatch

const PRIORITY_RANK: Record<CardPriority, number> = { urgent: 0, high: 1, normal: 2, low: 3 };

export function priorityRank(priority: CardPriority): number {
  return PRIORITY_RANK[priority];
}

export interface PlannedDispatch {
  cardId: string;
  attempt: number;
  assignee: string;
  priority: CardPriority;
  /** When the card became ready: the start of its dispatch latency. */
  readySince: string;
}

/**
 * The dispatcher's decision for one board: ready cards (and cards sent back
 * with changes requested) whose assignee has room under the board's
 * maxInFlightPerAssignee, most urgent first, then longest waiting. Each gets
 * one card_dispatched event with the next attempt number and the epoch of
 * the lease the dispatcher holds.
 */
export function planDispatch(current: BoardState, cmd: { epoch: number; at: string }): Decision & { dispatched: PlannedDispatch[] } {
  const inFlight = new Map<string, number>();
  const candidates: CardState[] = [];
  current.order.forEach((id) => {
    const card = current.cards[id]!;
    if (card.assignee === null) return;
    if (card.status === 'dispatched' || card.status === 'running') inFlight.set(card.assignee, (inFlight.get(card.assignee) ?? 0) + 1);
    else if (card.status === 'ready' || card.status === 'changes_requested') candidates.push(card);
  });
  if (candidates.length === 0) return { events: [], state: current, dispatched: [] };
  const index = new Map(current.order.map((id, i) => [id, i]));
  candidates.sort((a, b) => PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] || a.statusSince.localeCompare(b.statusSince) || index.get(a.id)! - index.get(b.id)!);
  const batch = new BoardBatch(current);
  const dispatched: PlannedDispatch[] = [];
  for (const card of candidates) {
    const assignee = card.assignee!;
    const busy = inFlight.get(assignee) ?? 0;
    if (busy >= current.policy.maxInFlightPerAssignee) continue;
    inFlight.set(assignee, busy + 1);
    const attempt = card.attempt + 1;
    batch.emit({ type: 'card_dispatched', at: cmd.at, cardId: card.id, from: card.status as 'ready' | 'changes_requested', attempt, assignee, epoch: cmd.epoch });
    dispatched.push({ cardId: card.id, attempt, assignee, priority: card.priority, readySince: card.statusSince });
  }
  if (dispatched.length === 0) return { events: [], state: current, dispatched };
  return { ...done(batch), dispatched };
}

// ---------------------------------------------------------------- claims

function staleClaim(state: BoardState, card: CardState, what: string): ConflictError {
  const where =
    card.status === 'running'
      ? 'another claim holds it now'
      : card.status === 'ready' || card.status === 'dispatched'
        ? 'the claim expired or the card was reassigned, and it waits for its next dispatch'
        : `it is ${card.status} now`;
  return new ConflictError(`this claimToken no longer holds card ${card.id} on board "${state.boardId}" (${where}): stop ${what}, and call board.claimCard for new work`, {
    boardId: state.boardId,
    cardId: card.id,
    status: card.status,
    attempt: card.attempt,
  });
}

/** The card a claim token holds, or a 409 that says the claim is over and what to do. */
export function requireClaim(current: BoardState | undefined, boardId: string, cardId: string, claimToken: string, what = 'working on it'): CardState {
  const state = requireBoard(current, boardId);
  const card = requireCard(state, cardId);
  if (card.status !== 'running' || card.claim?.token !== claimToken) throw staleClaim(state, card, what);
  return card;
}

/**
 * A claim's lease as the database saw it in the command's own transaction:
 * when it runs out, and whether it already had by the database's clock (the
 * clock the sweep that ends it uses too).
 */
export interface ClaimLease {
  expiresAt: string;
  expired: boolean;
}

/**
 * The 409 for a claim whose lease ran out before the heartbeat or submission
 * that needed it, even if the sweep has not ended it yet: the attempt is over
 * and the card goes back to be dispatched again.
 */
export function claimLeaseExpired(state: BoardState, card: CardState, expiresAt: string | undefined, what: string): ConflictError {
  const when = expiresAt ? `expired at ${expiresAt} (no heartbeat extended it in time)` : 'is gone';
  return new ConflictError(
    `the claim lease on card ${card.id} on board "${state.boardId}" ${when}: this claim is over; stop ${what}, and call board.claimCard to claim the card again`,
    { boardId: state.boardId, cardId: card.id, attempt: card.attempt, reason: 'lease_expired', ...(expiresAt ? { leaseExpiresAt: expiresAt } : {}) },
  );
}

export interface ClaimCommand {
  cardId: string;
  attempt: number;
  claimToken: string;
  by: string;
  at: string;
}

/** Claims a dispatched card for its assignee: only the attempt that was dispatched, only by whom it was dispatched to. */
export function claimCard(current: BoardState | undefined, boardId: string, cmd: ClaimCommand): Decision {
  const state = requireBoard(current, boardId);
  const card = requireCard(state, cmd.cardId);
  if (card.status !== 'dispatched' || card.attempt !== cmd.attempt || card.assignee !== cmd.by) {
    throw new ConflictError(`card ${card.id} attempt ${cmd.attempt} is not waiting for ${cmd.by} (it is ${card.status}, attempt ${card.attempt}, assigned to ${card.assignee ?? 'nobody'})`, {
      cardId: card.id,
      status: card.status,
      attempt: card.attempt,
    });
  }
  const batch = new BoardBatch(state);
  batch.emit({ type: 'card_claimed', at: cmd.at, cardId: card.id, attempt: cmd.attempt, claimToken: cmd.claimToken, by: cmd.by });
  return done(batch);
}

/**
 * A claim is acted on only by the agent that holds it: a token that reached
 * another agent's key does not let that key heartbeat or submit (and so be
 * recorded as having done the work).
 */
export function requireClaimHolder(card: CardState, agent: string, what: 'heartbeat' | 'submit'): CardState {
  const holder = card.claim?.by;
  if (holder !== undefined && holder !== agent) {
    throw new ForbiddenError(`${holder} holds the claim on card ${card.id}, and this key acts as agent ${agent}: ${what} with ${holder}'s own key`, {
      details: { cardId: card.id, holder, keyAgent: agent },
    });
  }
  return card;
}

export interface SubmitCommand {
  cardId: string;
  claimToken: string;
  /** The agent of the caller's key: it must hold the claim. */
  by: string;
  outcome: 'completed' | 'failed';
  summary: string;
  evidence: BoardEvidenceInput[];
  at: string;
  /**
   * The claim's lease, locked in the submission's transaction; null when no
   * lease is held under the token. The service always passes it; only pure
   * replays of a board without leases leave it out.
   */
  lease?: ClaimLease | null;
}

/** The error of a completion with no evidence at all; the handler records the diagnostic it names. */
export function completionWithoutEvidence(state: BoardState, card: CardState): BadInputError {
  return new BadInputError(
    `card ${card.id} cannot be submitted as completed without evidence: pass evidence (tool results, files, URLs, messages) in this call or attach it with board.attachEvidence, then submit again`,
    [{ path: 'evidence', message: 'no evidence: a completion needs at least one piece' }],
    { boardId: state.boardId, cardId: card.id, diagnostic: 'completion_without_evidence' },
  );
}

function endAttempt(batch: BoardBatch, state: BoardState, card: CardState, trigger: 'worker_failed' | 'claim_expired', by: string, summary: string, at: string): void {
  const to = card.failures + 1 >= state.policy.maxFailures ? 'blocked' : 'ready';
  batch.emit({ type: 'card_failed', at, cardId: card.id, attempt: card.attempt, trigger, to, by, summary });
}

/**
 * Whether a submission is a retry of the card's latest accepted one: the same
 * claim token, agent and summary, its answer lost (a Redis restart, a client
 * that timed out). It then changes nothing and answers that it succeeded,
 * where the claim it names has otherwise ended (409).
 */
export function recordedSubmission(state: BoardState, cmd: Pick<SubmitCommand, 'cardId' | 'claimToken' | 'by' | 'outcome' | 'summary'>): boolean {
  const card = findCard(state, cmd.cardId);
  return cmd.outcome === 'completed' && card?.submittedUnder === cmd.claimToken && card.submittedBy === cmd.by && card.submission === cmd.summary;
}

export function submitCard(current: BoardState | undefined, boardId: string, cmd: SubmitCommand): Decision {
  const state = requireBoard(current, boardId);
  if (recordedSubmission(state, cmd)) return { events: [], state };
  const card = requireClaimHolder(requireClaim(state, boardId, cmd.cardId, cmd.claimToken, 'submitting it'), cmd.by, 'submit');
  if (cmd.lease !== undefined && (cmd.lease === null || cmd.lease.expired)) throw claimLeaseExpired(state, card, cmd.lease?.expiresAt, 'submitting it');
  const by = card.claim!.by;
  const items = checkEvidence(state, card, cmd.evidence, 'evidence').map((e) => ({ ...e, attachedBy: by, at: cmd.at }));
  if (cmd.outcome === 'completed' && card.evidence.length + items.length === 0) throw completionWithoutEvidence(state, card);
  const batch = new BoardBatch(state);
  if (items.length) batch.emit({ type: 'evidence_attached', at: cmd.at, cardId: card.id, items, by });
  if (cmd.outcome === 'completed') batch.emit({ type: 'card_submitted', at: cmd.at, cardId: card.id, attempt: card.attempt, by, summary: cmd.summary });
  else endAttempt(batch, state, card, 'worker_failed', by, cmd.summary, cmd.at);
  return done(batch);
}

/** Ends a claim that stopped heartbeating; a no-op when the card moved on since (a late sweep changes nothing). */
export function expireClaim(current: BoardState, cmd: { cardId: string; claimToken: string; at: string }): Decision {
  const card = current.cards[cmd.cardId];
  if (!card || card.status !== 'running' || card.claim?.token !== cmd.claimToken) return { events: [], state: current };
  const batch = new BoardBatch(current);
  endAttempt(batch, current, card, 'claim_expired', DISPATCHER_AGENT, `no heartbeat from ${card.claim.by} within the claim lease`, cmd.at);
  return done(batch);
}

// ---------------------------------------------------------------- review

export interface ReviewCommand {
  cardId: string;
  /** Who decided: the agent of the caller's key, or the built-in verifier that key asked (decision auto). */
  reviewer: string;
  /** With the built-in verifier: the agent whose key asked it. */
  requestedBy?: string | undefined;
  decision: 'approve' | 'request_changes';
  missing: string[];
  notes: string;
  verifier?: CardReview['verifier'];
  /** The built-in verifier's LLM quotes: requirements it showed with an item's own words, which the judge checks again here. */
  quotes?: readonly QuotedRequirement[];
  at: string;
}

/**
 * The rule check a review must pass before approving, for the handler to run
 * before asking an LLM anything. A review is independent or it is refused:
 * unless the board allows self-verification, the agent that submitted the
 * card may not review it in any way (approve, request changes, or ask the
 * built-in verifier: `requestedBy`), so its key cannot steer its own verdict.
 */
export function reviewableCard(current: BoardState | undefined, boardId: string, cmd: Pick<ReviewCommand, 'cardId' | 'reviewer' | 'requestedBy' | 'decision'>): { card: CardState; rule: RuleVerdict } {
  const state = requireBoard(current, boardId);
  const card = requireCard(state, cmd.cardId);
  assertTransition(card, cmd.decision === 'approve' ? 'verified' : 'changes_requested', cmd.decision === 'approve' ? 'approve' : 'request_changes');
  const asking = cmd.requestedBy ?? cmd.reviewer;
  if (asking === card.submittedBy && !state.policy.allowSelfVerify) {
    const what = cmd.requestedBy !== undefined ? 'ask the built-in verifier about it' : 'review it';
    throw new ForbiddenError(
      `${asking} submitted card ${card.id} and may not ${what}: the board's policy does not allow self-verification. Another agent's key must ask (approve, request_changes, or auto for the built-in verifier)`,
      { details: { cardId: card.id, status: card.status, submittedBy: card.submittedBy, keyAgent: asking } },
    );
  }
  return { card, rule: ruleVerify(card) };
}

export function reviewCard(current: BoardState | undefined, boardId: string, cmd: ReviewCommand): Decision {
  const { card, rule: ruleAlone } = reviewableCard(current, boardId, cmd);
  const rule = cmd.quotes?.length ? supportByQuotes(card, ruleAlone, cmd.quotes) : ruleAlone;
  const state = current!;
  if (cmd.decision === 'approve' && rule.decision !== 'approve') {
    throw new ConflictError(`card ${card.id} cannot be verified: ${rule.reasons.join('; ')}. Request changes naming what is missing, or attach the evidence first`, {
      cardId: card.id,
      status: card.status,
      missing: rule.missing,
    });
  }
  const review: CardReview = {
    reviewer: cmd.reviewer,
    ...(cmd.requestedBy !== undefined ? { requestedBy: cmd.requestedBy } : {}),
    decision: cmd.decision,
    missing: cmd.decision === 'approve' ? [] : cmd.missing,
    notes: cmd.notes,
    ...(cmd.verifier ? { verifier: cmd.verifier } : {}),
    at: cmd.at,
  };
  const batch = new BoardBatch(state);
  batch.emit({ type: 'card_reviewed', at: cmd.at, cardId: card.id, review, to: cmd.decision === 'approve' ? 'verified' : 'changes_requested' });
  if (cmd.decision === 'approve') {
    const now = batch.state!;
    for (const dependent of dependentsOf(now, card.id)) {
      if (dependent.status === 'todo' && dependenciesVerified(now, dependent)) {
        batch.emit({ type: 'card_transitioned', at: cmd.at, cardId: dependent.id, from: 'todo', to: 'ready', trigger: 'dependencies_verified', blockReason: null, by: cmd.reviewer, reason: null });
      }
    }
  }
  return done(batch);
}
