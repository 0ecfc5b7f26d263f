import type { BoardEvidenceInput, NewCard } from '@vouch/contracts';
import { NewCardSchema } from '@vouch/contracts';
import {
  addCards,
  attachEvidence,
  claimCard,
  createBoard,
  expireClaim,
  planDispatch,
  reviewCard,
  submitCard,
  updateCard,
  type ClaimLease,
  type Decision,
  type UpdateCardCommand,
} from '../src/domain/board-commands.js';
import type { BoardEvent } from '../src/domain/board-events.js';
import type { BoardState, CardState } from '../src/domain/replay-board.js';

/** A board driven through the pure commands, keeping its event stream, with a clock that steps one second per command. */
export class BoardDriver {
  events: BoardEvent[] = [];
  state: BoardState | undefined;
  private tick = 0;
  epoch = 1;

  constructor(
    readonly boardId = 'board-1',
    private readonly start = Date.parse('2025-03-01T10:00:00.000Z'),
  ) {}

  now(): string {
    this.tick += 1;
    return new Date(this.start + this.tick * 1000).toISOString();
  }

  get board(): BoardState {
    if (!this.state) throw new Error('no board yet');
    return this.state;
  }

  card(id: string): CardState {
    const card = this.board.cards[id];
    if (!card) throw new Error(`no card ${id}`);
    return card;
  }

  private take<D extends Decision>(decision: D): D {
    this.events.push(...decision.events);
    this.state = decision.state;
    return decision;
  }

  create(policy: Partial<BoardState['policy']> = {}, visibility: BoardState['visibility'] = 'admin') {
    return this.take(
      createBoard(this.state, {
        boardId: this.boardId,
        title: 'Check the router fleet',
        goal: 'Find routers on old firmware',
        scope: { kind: 'run', ref: 'run-1' },
        owner: 'planner',
        policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 60, ...policy },
        visibility,
        at: this.now(),
      }),
    );
  }

  add(cards: Array<Partial<NewCard> & { title: string }>, extra: { splitFrom?: string; reason?: string } = {}) {
    return this.take(addCards(this.state, this.boardId, { by: 'planner', cards: cards.map((c) => NewCardSchema.parse(c)), ...extra, at: this.now() }));
  }

  update(cmd: Omit<UpdateCardCommand, 'at' | 'by'> & { by?: string }) {
    return this.take(updateCard(this.state, this.boardId, { by: 'planner', ...cmd, at: this.now() }));
  }

  attach(cardId: string, items: BoardEvidenceInput[], by = 'worker-1') {
    return this.take(attachEvidence(this.state, this.boardId, { cardId, by, items, at: this.now() }));
  }

  dispatch() {
    return this.take(planDispatch(this.board, { epoch: this.epoch, at: this.now() }));
  }

  claim(cardId: string, token = `tok-${cardId}-${this.card(cardId).attempt}`) {
    const card = this.card(cardId);
    this.take(claimCard(this.state, this.boardId, { cardId, attempt: card.attempt, claimToken: token, by: card.assignee!, at: this.now() }));
    return token;
  }

  /** Submits as `by`, the claim holder's agent unless a test names another key's. */
  submit(cardId: string, token: string, summary: string, evidence: BoardEvidenceInput[] = [], outcome: 'completed' | 'failed' = 'completed', by = this.state?.cards[cardId]?.claim?.by ?? 'nobody') {
    return this.take(submitCard(this.state, this.boardId, { cardId, claimToken: token, by, outcome, summary, evidence, at: this.now() }));
  }

  /** Submits as the claim holder with the lease the service would have read in the submission's transaction. */
  submitUnderLease(cardId: string, token: string, lease: ClaimLease | null, evidence: BoardEvidenceInput[]) {
    return this.take(submitCard(this.state, this.boardId, { cardId, claimToken: token, by: this.card(cardId).claim!.by, outcome: 'completed', summary: 'done', evidence, lease, at: this.now() }));
  }

  expire(cardId: string) {
    return this.take(expireClaim(this.board, { cardId, claimToken: this.card(cardId).claim!.token, at: this.now() }));
  }

  review(cardId: string, reviewer: string, decision: 'approve' | 'request_changes', missing: string[] = [], notes = '', requestedBy?: string) {
    return this.take(reviewCard(this.state, this.boardId, { cardId, reviewer, requestedBy, decision, missing, notes, at: this.now() }));
  }

  /** Dispatches, claims and submits a card with one piece of evidence whose content shows its requirements (or, with none, its title). */
  work(cardId: string, summary = `did ${cardId}`) {
    this.dispatch();
    const token = this.claim(cardId);
    return this.submit(cardId, token, summary, [showingEvidence(this.card(cardId))]);
  }
}

/** A tool result whose content states each of the card's requirements (or, with none, that its title is done). */
export function showingEvidence(card: Pick<CardState, 'id' | 'title' | 'evidenceRequirements'>): BoardEvidenceInput {
  const requirements = card.evidenceRequirements;
  const shown = requirements.length ? requirements.map((r) => r.text).join('; ') : `${card.title}: completed`;
  return { kind: 'tool_result', ref: `call-${card.id}`, summary: shown, ...(requirements.length ? { covers: requirements.map((r) => r.id) } : {}) };
}

export function thrown(fn: () => unknown): Error & { httpStatus?: number; details?: Record<string, unknown>; fields?: Array<{ path: string; message: string }> } {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}
