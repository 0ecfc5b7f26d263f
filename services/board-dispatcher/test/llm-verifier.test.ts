import { startOllamaTestServer, testActor, type OllamaTestServer } from '@vouch/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';
import { BoardDriver } from './drive-board.js';
import { createLlmVerifier, verifierPrompt } from '../src/llm-verifier.js';

const MODEL = 'qwen2.5:7b-instruct';

/** The built-in verifier's second opinion, against the protocol-faithful Ollama test server. */
describe('the LLM second opinion', () => {
  let ollama: OllamaTestServer;

  beforeAll(async () => {
    ollama = await startOllamaTestServer({ models: [{ name: MODEL, capabilities: ['completion'] }] });
  });
  afterAll(async () => {
    await ollama?.close();
  });
  beforeEach(() => ollama.reset());

  const submittedCard = () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'Dump the orders db', assignee: 'worker-1', evidenceRequirements: ['the dump file and its size'] }]);
    b.work('c-1', 'dumped orders.sql.gz, 2.3 GB');
    return b.card('c-1');
  };

  it('sends the card, its requirements and its evidence, and returns the model\'s verdict', async () => {
    ollama.reply({ json: { decision: 'request_changes', reasons: ['no checksum'], missing: ['a checksum of the dump'] } });
    const verifier = createLlmVerifier({ host: ollama.url, model: MODEL, timeoutMs: 5_000 });
    const card = submittedCard();
    await expect(verifier.review(card)).resolves.toEqual({ ran: true, model: MODEL, decision: 'request_changes', reasons: ['no checksum'], missing: ['a checksum of the dump'], requirements: [] });
    expect(ollama.calls).toHaveLength(1);
    expect(verifierPrompt(card).user).toContain('- r1: the dump file and its size');
    expect(verifierPrompt(card).user).toContain('- e-1 [tool_result call-c-1] the dump file and its size (covers r1)');
  });

  it('a timeout or an answer off the schema leaves the rule result, and says why', async () => {
    ollama.replyOnce({ json: { decision: 'approve' }, delayMs: 2_000 });
    const slow = createLlmVerifier({ host: ollama.url, model: MODEL, timeoutMs: 200 });
    await expect(slow.review(submittedCard())).resolves.toEqual({
      ran: true,
      model: MODEL,
      note: 'the verifier model did not answer within 200 ms (BOARD_VERIFIER_TIMEOUT_MS): the rule result stands',
    });
    ollama.reply({ json: { verdict: 'looks fine' } });
    const verifier = createLlmVerifier({ host: ollama.url, model: MODEL, timeoutMs: 5_000 });
    await expect(verifier.review(submittedCard())).resolves.toEqual({ ran: true, model: MODEL, note: 'the verifier model\'s answer did not fit the verdict schema: the rule result stands' });
  });

  it('is not asked when no Ollama is configured', async () => {
    const off = createLlmVerifier({ host: undefined, model: MODEL, timeoutMs: 5_000 });
    await expect(off.review(submittedCard())).resolves.toEqual({ ran: false, note: 'OLLAMA_HOST is not set: the rule check decided alone' });
    expect(ollama.calls).toHaveLength(0);
  });
});

describe('review with decision auto, with an Ollama configured', () => {
  let ollama: OllamaTestServer;
  let svc: BoardServiceUnderTest;
  let n = 0;
  const caller = (agent = 'planner') => ({ tenant: 'acme', jobId: `llm-${++n}`, actor: testActor(agent) });

  beforeAll(async () => {
    ollama = await startOllamaTestServer({ models: [{ name: MODEL, capabilities: ['completion'] }] });
    svc = await startBoardServiceUnderTest('board_llm', { OLLAMA_HOST: ollama.url, BOARD_VERIFIER_MODEL: MODEL, BOARD_VERIFIER_TIMEOUT_MS: '5000' });
    await svc.service.commands.create(caller(), { boardId: 'llm', title: 'llm', goal: '', scope: { kind: 'run', ref: 'llm' }, owner: 'planner', policy: { allowSelfVerify: false, maxInFlightPerAssignee: 5, maxFailures: 3, claimTtlSeconds: 60 } });
  });
  afterAll(async () => {
    await svc?.stop();
    await ollama?.close();
  });
  beforeEach(() => ollama.reset());

  /** A card submitted by its worker, with or without evidence for its one requirement. */
  const submitted = async (covered: boolean) => {
    // A worker of its own: a card sent back by an earlier test is dispatched again to its worker.
    const worker = `worker-${++n}`;
    const { cards } = await svc.service.commands.addCards(caller(), {
      boardId: 'llm',
      by: 'planner',
      cards: [{ title: 'Dump the orders db', description: '', lane: 'worker', assignee: worker, priority: 'normal', dependsOn: [], evidenceRequirements: ['a checksum of the dump'] }],
    });
    const claim = await svc.service.commands.claimCard(caller(worker), { boardId: 'llm', waitSeconds: 10 });
    expect(claim.card?.id).toBe(cards[0]!.id);
    lastEvidence = await svc.service.commands.submitCard(caller(worker), {
      boardId: 'llm',
      cardId: cards[0]!.id,
      claimToken: claim.claimToken!,
      outcome: 'completed',
      summary: 'dumped',
      evidence: [{ kind: 'tool_result', summary: covered ? 'sha256 checksum of the dump: 9f2c' : 'dumped orders.sql.gz', ...(covered ? { covers: ['r1'] } : {}) }],
    });
    return cards[0]!.id;
  };
  /** The id of the evidence the last submitted card carries (ids are the board's: e-1, e-2, … across its cards). */
  let lastEvidence: { card: { evidence: Array<{ id: string }> } } | undefined;
  const evidenceId = (): string => lastEvidence!.card.evidence[0]!.id;
  const review = (cardId: string) => svc.service.commands.reviewCard(caller('verifier-1'), { boardId: 'llm', cardId, decision: 'auto', missing: [], notes: '' });

  it('the model may turn an approval into a request for changes', async () => {
    ollama.reply({ json: { decision: 'request_changes', reasons: ['the checksum is not compared with anything'], missing: ['the checksum of the restored copy'] } });
    const out = await review(await submitted(true));
    expect(out).toMatchObject({ decision: 'request_changes', card: { status: 'changes_requested', lastReview: { reviewer: 'builtin-verifier', missing: ['the checksum of the restored copy'] } } });
    expect(out.card.lastReview?.verifier).toEqual({
      rule: { decision: 'approve', reasons: ['requirement r1 (a checksum of the dump) is shown by e-1: "sha256 checksum of the dump: 9f2c"'] },
      llm: { ran: true, model: MODEL, decision: 'request_changes' },
    });
  });

  it('an approval with no quote, or a quote the judge refuses, never approves what the rule check holds', async () => {
    for (const quote of [undefined, 'sha256 checksum of the dump: 9f2c', 'dumped']) {
      ollama.reset();
      const cardId = await submitted(false);
      const requirements = quote === undefined ? [] : [{ requirementId: 'r1', shown: true, evidenceId: evidenceId(), quote }];
      ollama.reply({ json: { decision: 'approve', reasons: ['fine'], missing: [], requirements } });
      const out = await review(cardId);
      expect(out, JSON.stringify(requirements)).toMatchObject({ decision: 'request_changes', card: { status: 'changes_requested', lastReview: { missing: ['r1: a checksum of the dump'] } } });
      expect(out.card.lastReview?.verifier?.afterQuotes).toBeUndefined();
    }
    const refused = await (async () => {
      ollama.reset();
      const cardId = await submitted(false);
      ollama.reply({ json: { decision: 'approve', reasons: ['fine'], missing: [], requirements: [{ requirementId: 'r1', shown: true, evidenceId: evidenceId(), quote: 'dumped orders' }] } });
      return review(cardId);
    })();
    expect(refused.reasons).toContain("LLM verifier's quote for r1 not accepted: the quote shares too little with the claim to be about it");
  });

  it('a requirement the rules could not see is shown by the model\'s quote, once the judge checks it is the item\'s own words', async () => {
    const worker = `worker-${++n}`;
    const { cards } = await svc.service.commands.addCards(caller(), {
      boardId: 'llm',
      by: 'planner',
      cards: [{ title: 'Roll out 2.7.1', description: '', lane: 'worker', assignee: worker, priority: 'normal', dependsOn: [], evidenceRequirements: ['all 12 NA game servers upgraded to 2.7.1'] }],
    });
    const claim = await svc.service.commands.claimCard(caller(worker), { boardId: 'llm', waitSeconds: 10 });
    const fleet = await svc.service.commands.submitCard(caller(worker), {
      boardId: 'llm',
      cardId: cards[0]!.id,
      claimToken: claim.claimToken!,
      outcome: 'completed',
      summary: 'fleet on 2.7.1',
      evidence: [{ kind: 'tool_result', summary: 'fleetctl status na-*: 12/12 NA hosts report build 2.7.1' }],
    });
    ollama.reply({ json: { decision: 'approve', reasons: ['the fleet status shows it'], missing: [], requirements: [{ requirementId: 'r1', shown: true, evidenceId: fleet.card.evidence[0]!.id, quote: '12/12 NA hosts report build 2.7.1' }] } });
    const out = await review(cards[0]!.id);
    expect(out).toMatchObject({ decision: 'approve', card: { status: 'verified' } });
    expect(out.card.lastReview?.verifier).toMatchObject({ rule: { decision: 'request_changes' }, afterQuotes: { decision: 'approve' }, llm: { ran: true, decision: 'approve' } });
    expect(out.reasons).toContain(`requirement r1 (all 12 NA game servers upgraded to 2.7.1) is shown by ${fleet.card.evidence[0]!.id}, quoted by the LLM verifier and checked by the judge: "12/12 NA hosts report build 2.7.1"`);
  });

  it('an Ollama failure leaves the rule result, and the review says so', async () => {
    ollama.reply({ error: { status: 500, message: 'model crashed' } });
    const out = await review(await submitted(true));
    expect(out.decision).toBe('approve');
    expect(out.card.status).toBe('verified');
    expect(out.reasons.at(-1)).toBe('the verifier model answered with an error (HTTP 500): the rule result stands');
  });
});
