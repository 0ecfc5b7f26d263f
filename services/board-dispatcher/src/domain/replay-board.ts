import type { BlockReason, BoardDecision, BoardPolicy, BoardScope, BoardVisibility, Card, CardStatus, DecisionKind } from '@vouch/contracts';
import type { BoardEvent, NewBoardEvent } from './board-events.js';
import { isTerminal, transitionAllowed, type TransitionTrigger } from './card-transitions.js';

/**
 * The board state: a pure fold of the event stream, with no clock but the
 * events' `at`. It holds only JSON values and never an `undefined` property,
 * so it survives a jsonb round trip unchanged (snapshots are stored as jsonb).
 */

/** The live claim on a running card: who holds it, for which attempt, under which token. */
export interface CardClaim {
  token: string;
  attempt: number;
  by: string;
  at: string;
}

export interface CardState extends Card {
  claim: CardClaim | null;
  /**
   * The claim token of the card's latest accepted submission, so that a retry
   * of it (its answer lost in an outage) learns it succeeded. Absent in states
   * folded before it was kept; never shown (publicCard).
   */
  submittedUnder?: string;
  /** Times the card was blocked, by reason: the repeated-block diagnostic counts them. */
  blocks: Partial<Record<BlockReason, number>>;
}

export interface BoardState {
  boardId: string;
  title: string;
  goal: string;
  scope: BoardScope;
  owner: string;
  policy: BoardPolicy;
  /** Who the board's answer is for: the public form of board.synthesize leaves out paths, refs and internal ids. */
  visibility: BoardVisibility;
  status: 'open' | 'done';
  version: number;
  createdAt: string;
  updatedAt: string;
  /** Cards by id. */
  cards: Record<string, CardState>;
  /** Card ids in the order they were added. */
  order: string[];
  /** Client keys to card ids. */
  keys: Record<string, string>;
  /** Evidence ids are e-1, e-2, ... across the board. */
  evidenceCount: number;
  decisions: BoardDecision[];
}

/**
 * Decisions the state keeps, newest last. A board that retries a card
 * thousands of times would otherwise grow its state (and every snapshot and
 * read) with each retry; the event stream holds the whole history.
 */
export const DECISIONS_KEPT = 500;

/** The event stream is corrupt or out of order: a bug or a bad write, never a caller's mistake. */
export class BoardStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BoardStreamError';
  }
}

/**
 * A state being built by a batch of events. The first change to the state,
 * its card map, a card or one of the arrays copies it, so the input state
 * (which may be cached, frozen and shared) is never modified, and a batch of
 * n events over a board of c cards costs O(n + c) instead of O(n·c).
 */
class Draft {
  readonly state: BoardState;
  private readonly copied = new Set<string>();
  private cardsCopied = false;
  private ordersCopied = false;
  private decisionsCopied = false;

  constructor(base: BoardState) {
    this.state = { ...base };
  }

  card(id: string, seq: number): CardState {
    const current = this.state.cards[id];
    if (!current) throw new BoardStreamError(`board ${this.state.boardId}: event ${seq} is about card ${id}, which the board does not have`);
    if (this.copied.has(id)) return current;
    if (!this.cardsCopied) {
      this.state.cards = { ...this.state.cards };
      this.cardsCopied = true;
    }
    const copy: CardState = { ...current, dependsOn: [...current.dependsOn], evidence: [...current.evidence], blocks: { ...current.blocks } };
    this.state.cards[id] = copy;
    this.copied.add(id);
    return copy;
  }

  addCard(card: CardState): void {
    if (!this.cardsCopied) {
      this.state.cards = { ...this.state.cards };
      this.cardsCopied = true;
    }
    if (!this.ordersCopied) {
      this.state.order = [...this.state.order];
      this.state.keys = { ...this.state.keys };
      this.ordersCopied = true;
    }
    this.state.cards[card.id] = card;
    this.copied.add(card.id);
    this.state.order.push(card.id);
    if (card.key !== null) this.state.keys[card.key] = card.id;
  }

  decide(decision: BoardDecision): void {
    if (!this.decisionsCopied) {
      this.state.decisions = [...this.state.decisions];
      this.decisionsCopied = true;
    }
    this.state.decisions.push(Object.freeze(decision));
  }

  /** Freezes what this batch built; everything else came frozen from the base state. */
  finish(): BoardState {
    for (const id of this.copied) {
      const card = this.state.cards[id]!;
      Object.freeze(card.dependsOn);
      Object.freeze(card.evidence);
      Object.freeze(card.blocks);
      Object.freeze(card);
    }
    Object.freeze(this.state.cards);
    Object.freeze(this.state.order);
    Object.freeze(this.state.keys);
    // The state keeps the latest decisions (the stream keeps every one); trimmed once per batch, not per event.
    if (this.state.decisions.length > DECISIONS_KEPT) this.state.decisions = this.state.decisions.slice(-DECISIONS_KEPT);
    Object.freeze(this.state.decisions);
    return Object.freeze(this.state);
  }
}

function move(draft: Draft, card: CardState, to: CardStatus, trigger: TransitionTrigger, seq: number, at: string): void {
  if (!transitionAllowed(card.status, to, trigger)) {
    throw new BoardStreamError(`board ${draft.state.boardId}: event ${seq} moves card ${card.id} from ${card.status} to ${to} by ${trigger}, which the transition table does not allow`);
  }
  card.status = to;
  card.statusSince = at;
  if (to !== 'blocked') card.blockReason = null;
  if (to !== 'running') card.claim = null;
}

function decision(kind: DecisionKind, cardId: string, reason: string, by: string, at: string): BoardDecision {
  return { kind, cardId, reason, by, at };
}

function applyTo(draft: Draft, event: BoardEvent): void {
  const s = draft.state;
  if (event.type === 'board_created') throw new BoardStreamError(`board ${s.boardId} is created twice (seq ${event.seq})`);
  if (event.seq !== s.version + 1) throw new BoardStreamError(`board ${s.boardId}: event seq ${event.seq} does not follow version ${s.version}`);
  s.version = event.seq;
  s.updatedAt = event.at;
  const { at, seq } = event;
  switch (event.type) {
    case 'card_added': {
      const c = event.card;
      if (s.cards[c.id]) throw new BoardStreamError(`board ${s.boardId}: card ${c.id} is added twice (seq ${seq})`);
      draft.addCard({
        ...c,
        dependsOn: [...c.dependsOn],
        evidenceRequirements: c.evidenceRequirements.map((r) => Object.freeze({ ...r })),
        blockReason: null,
        evidence: [],
        attempt: 0,
        failures: 0,
        submittedBy: null,
        submission: null,
        lastReview: null,
        createdAt: at,
        statusSince: at,
        claim: null,
        blocks: {},
      });
      Object.freeze(s.cards[c.id]!.evidenceRequirements);
      return;
    }
    case 'card_updated': {
      const card = draft.card(event.cardId, seq);
      const { changes } = event;
      if (changes.assignee !== undefined && changes.assignee !== card.assignee) {
        draft.decide(decision('reassigned', card.id, event.reason ?? `assignee ${card.assignee ?? 'none'} → ${changes.assignee ?? 'none'}`, event.by, at));
      }
      if (changes.title !== undefined) card.title = changes.title;
      if (changes.description !== undefined) card.description = changes.description;
      if (changes.assignee !== undefined) card.assignee = changes.assignee;
      if (changes.priority !== undefined) card.priority = changes.priority;
      if (changes.deadline !== undefined) card.deadline = changes.deadline;
      if (changes.dependsOn !== undefined) card.dependsOn = [...changes.dependsOn];
      return;
    }
    case 'evidence_attached': {
      const card = draft.card(event.cardId, seq);
      event.items.forEach((item, k) => {
        const expected = `e-${s.evidenceCount + k + 1}`;
        if (item.id !== expected) throw new BoardStreamError(`board ${s.boardId}: evidence ${item.id} at seq ${seq}, expected ${expected}`);
        card.evidence.push(Object.freeze({ ...item, covers: Object.freeze([...item.covers]) as string[] }));
      });
      s.evidenceCount += event.items.length;
      return;
    }
    case 'card_transitioned': {
      const card = draft.card(event.cardId, seq);
      if (card.status !== event.from) throw new BoardStreamError(`board ${s.boardId}: event ${seq} moves card ${card.id} from ${event.from}, but it is ${card.status}`);
      move(draft, card, event.to, event.trigger, seq, at);
      if (event.to === 'blocked' && event.blockReason) {
        card.blockReason = event.blockReason;
        card.blocks[event.blockReason] = (card.blocks[event.blockReason] ?? 0) + 1;
      }
      const kind: DecisionKind | undefined =
        event.trigger === 'block' || event.trigger === 'repeated_failures'
          ? 'blocked'
          : event.trigger === 'unblock'
            ? 'unblocked'
            : event.trigger === 'cancel'
              ? 'cancelled'
              : event.trigger === 'split'
                ? 'split'
                : undefined;
      if (kind) draft.decide(decision(kind, card.id, event.reason ?? (event.blockReason ? `blocked: ${event.blockReason}` : kind), event.by, at));
      break;
    }
    case 'card_dispatched': {
      const card = draft.card(event.cardId, seq);
      if (card.status !== event.from) throw new BoardStreamError(`board ${s.boardId}: card ${card.id} is dispatched from ${event.from}, but it is ${card.status}`);
      if (event.attempt !== card.attempt + 1) throw new BoardStreamError(`board ${s.boardId}: card ${card.id} dispatched as attempt ${event.attempt} after attempt ${card.attempt}`);
      if (event.assignee !== card.assignee) throw new BoardStreamError(`board ${s.boardId}: card ${card.id} dispatched to ${event.assignee}, but it is assigned to ${card.assignee ?? 'nobody'}`);
      move(draft, card, 'dispatched', 'dispatch', seq, at);
      card.attempt = event.attempt;
      break;
    }
    case 'card_claimed': {
      const card = draft.card(event.cardId, seq);
      if (event.attempt !== card.attempt) throw new BoardStreamError(`board ${s.boardId}: card ${card.id} claimed for attempt ${event.attempt}, but it is at attempt ${card.attempt}`);
      move(draft, card, 'running', 'claim', seq, at);
      card.claim = { token: event.claimToken, attempt: event.attempt, by: event.by, at };
      break;
    }
    case 'card_submitted': {
      const card = draft.card(event.cardId, seq);
      if (event.attempt !== card.attempt) throw new BoardStreamError(`board ${s.boardId}: card ${card.id} submitted for attempt ${event.attempt}, but it is at attempt ${card.attempt}`);
      const token = card.claim?.token;
      move(draft, card, 'submitted', 'submit', seq, at);
      if (token !== undefined) card.submittedUnder = token;
      card.submittedBy = event.by;
      card.submission = event.summary;
      break;
    }
    case 'card_failed': {
      const card = draft.card(event.cardId, seq);
      if (event.attempt !== card.attempt) throw new BoardStreamError(`board ${s.boardId}: card ${card.id} failed attempt ${event.attempt}, but it is at attempt ${card.attempt}`);
      move(draft, card, event.to, event.to === 'blocked' ? 'repeated_failures' : event.trigger, seq, at);
      card.failures += 1;
      if (event.to === 'blocked') {
        card.blockReason = 'repeated_failures';
        card.blocks.repeated_failures = (card.blocks.repeated_failures ?? 0) + 1;
      }
      draft.decide(decision(event.to === 'blocked' ? 'blocked' : 'failed', card.id, `attempt ${event.attempt} ${event.trigger === 'claim_expired' ? 'stopped heartbeating' : 'failed'}: ${event.summary}`, event.by, at));
      break;
    }
    case 'card_reviewed': {
      const card = draft.card(event.cardId, seq);
      if (event.to === 'verified' && card.evidence.length === 0) throw new BoardStreamError(`board ${s.boardId}: card ${card.id} is verified at seq ${seq} without evidence`);
      move(draft, card, event.to, event.to === 'verified' ? 'approve' : 'request_changes', seq, at);
      card.lastReview = event.review;
      draft.decide(
        decision(
          event.to === 'verified' ? 'completed' : 'changes_requested',
          card.id,
          event.to === 'verified' ? event.review.notes || `verified by ${event.review.reviewer}` : `missing: ${event.review.missing.join('; ')}`,
          event.review.reviewer,
          at,
        ),
      );
      break;
    }
  }
}

function boardStatus(state: BoardState): 'open' | 'done' {
  return state.order.length > 0 && state.order.every((id) => isTerminal(state.cards[id]!.status)) ? 'done' : 'open';
}

function create(event: BoardEvent): BoardState {
  if (event.type !== 'board_created') throw new BoardStreamError(`a ${event.type} event (seq ${event.seq}) arrived before the board was created`);
  if (event.seq !== 1) throw new BoardStreamError(`board ${event.boardId}: the creating event has seq ${event.seq}, not 1`);
  return {
    boardId: event.boardId,
    title: event.title,
    goal: event.goal,
    scope: { ...event.scope },
    owner: event.owner,
    policy: { ...event.policy },
    visibility: event.visibility,
    status: 'open',
    version: 1,
    createdAt: event.at,
    updatedAt: event.at,
    cards: {},
    order: [],
    keys: {},
    evidenceCount: 0,
    decisions: [],
  };
}

/**
 * Events applied one at a time to a state, for commands whose later events
 * depend on the earlier ones (a verification readies the cards waiting on
 * it). One copy-on-write draft serves the whole batch, so a batch of n
 * events over c cards costs O(n + c).
 */
export class BoardBatch {
  private draft: Draft | undefined;
  private created: BoardState | undefined;
  readonly events: BoardEvent[] = [];

  constructor(private readonly base: BoardState | undefined) {}

  /** The state with every event so far; read it, never change it. */
  get state(): BoardState | undefined {
    return this.draft?.state ?? this.created ?? this.base;
  }

  /** Numbers an event after the last one and applies it. */
  emit(event: NewBoardEvent): BoardEvent {
    const current = this.state;
    const numbered = { ...event, seq: (current?.version ?? 0) + 1 } as BoardEvent;
    if (!current) {
      this.created = deepFreeze(create(numbered));
    } else {
      this.draft ??= new Draft(current);
      applyTo(this.draft, numbered);
    }
    this.events.push(numbered);
    return numbered;
  }

  /** The state after every event, frozen. */
  finish(): BoardState | undefined {
    if (!this.draft) return this.state;
    this.draft.state.status = boardStatus(this.draft.state);
    return this.draft.finish();
  }
}

/**
 * Applies events on top of a state (a snapshot plus the events after it, or
 * undefined and the whole stream). Returns a new frozen state; the input
 * state and everything in it is left as it was.
 */
export function applyEvents(state: BoardState | undefined, events: Iterable<BoardEvent>): BoardState | undefined {
  let draft: Draft | undefined;
  let created: BoardState | undefined;
  for (const event of events) {
    if (!draft) {
      if (!state && !created) {
        created = create(event);
        continue;
      }
      draft = new Draft(created ? deepFreeze(created) : state!);
    }
    applyTo(draft, event);
  }
  if (!draft) return created ? deepFreeze(created) : state;
  draft.state.status = boardStatus(draft.state);
  return draft.finish();
}

export function applyEvent(state: BoardState | undefined, event: BoardEvent): BoardState {
  return applyEvents(state, [event])!;
}

/** Rebuilds a board from its whole event stream; undefined for an empty stream. */
export function replayBoard(events: Iterable<BoardEvent>): BoardState | undefined {
  return applyEvents(undefined, events);
}

/** Freezes a value and everything in it, stopping at what is frozen already (a snapshot read from the store). */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}

/** The card as callers see it: the claim token stays inside the service. */
export function publicCard(card: CardState): Card {
  const { claim: _claim, blocks: _blocks, submittedUnder: _submittedUnder, ...rest } = card;
  return rest;
}

/** Cards by status, for summaries and metrics. */
export function countByStatus(state: BoardState): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const id of state.order) {
    const status = state.cards[id]!.status;
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}
