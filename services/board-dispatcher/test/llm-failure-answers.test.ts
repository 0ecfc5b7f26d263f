import { QUEUES } from '@vouch/contracts';
import { createLogger } from '@vouch/platform';
import { OLLAMA_FAILURE_MODES, QueueJobs, eventually, startOllamaFailureRig, testActor, type OllamaFailureMode, type OllamaFailureRig } from '@vouch/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

const MODEL = 'qwen2.5:7b-instruct';
const BOARD = 'ollama-failures';

/** The last reason of the review, in full, for each way Ollama fails. */
const NOTE: Record<OllamaFailureMode, string> = {
  refused: 'the verifier model could not be reached (check that Ollama runs at OLLAMA_HOST): the rule result stands',
  timeout: 'the verifier model did not answer within 1000 ms (BOARD_VERIFIER_TIMEOUT_MS): the rule result stands',
  http_500: 'the verifier model answered with an error (HTTP 500): the rule result stands',
  malformed_content: 'the verifier model answered with something other than JSON: the rule result stands',
  malformed_body: "the verifier model's answer could not be read (it is not Ollama's JSON): the rule result stands",
  model_missing: `the verifier model ${MODEL} is not installed on the Ollama server (pull it there, or name an installed model in BOARD_VERIFIER_MODEL): the rule result stands`,
};

interface ReviewAnswer {
  decision: string;
  reasons: string[];
  card: { id: string; status: string; lastReview?: { verifier?: { llm?: Record<string, unknown> } } };
}

/**
 * Issue 16: whichever way Ollama fails, a board.reviewCard with decision auto
 * answers with the rule result and says in words that the verifier model's
 * opinion was not had and why, holding no address, port, driver message,
 * stack or Ollama error text; those go to the service's log.
 */
describe('board.reviewCard answers when the LLM verifier fails (Ollama test server, real worker, Redis and Postgres)', () => {
  let rig: OllamaFailureRig;
  let svc: BoardServiceUnderTest;
  let jobs: QueueJobs;
  const log: string[] = [];
  let n = 0;

  beforeAll(async () => {
    rig = await startOllamaFailureRig({ models: [{ name: MODEL, capabilities: ['completion'] }] });
    const logger = createLogger({ service: 'board-dispatcher', level: 'warn', destination: { write: (line: string) => void log.push(line) } });
    svc = await startBoardServiceUnderTest('board_llm_failures', { OLLAMA_HOST: rig.url, BOARD_VERIFIER_MODEL: MODEL, BOARD_VERIFIER_TIMEOUT_MS: '1000' }, {}, { logger });
    jobs = new QueueJobs(svc.prefix, QUEUES.boardDispatcher);
    await jobs.ready();
    await actAs('planner', 'board.create', { boardId: BOARD, title: 'ollama failures', scope: { kind: 'run', ref: BOARD }, owner: 'planner', policy: { allowSelfVerify: false, maxInFlightPerAssignee: 5, maxFailures: 3, claimTtlSeconds: 60 } });
  });
  afterAll(async () => {
    await jobs?.close();
    await svc?.stop();
    await rig?.close();
  });

  /** Runs an operation as the gateway does for a key that acts as `agent` (the body names the same agent). */
  const actAs = <T = unknown>(agent: string, operation: string, input: Record<string, unknown>): Promise<T> => jobs.run<T>(operation, 'acme', input, { actor: testActor(agent) });

  /** A card submitted by its own worker with evidence for its one requirement: the rule check approves it. */
  const submitted = async (): Promise<string> => {
    const worker = `worker-${++n}`;
    const added = await actAs<{ cards: { id: string }[] }>('planner', 'board.addCards', {
      boardId: BOARD,
      by: 'planner',
      cards: [{ title: 'Dump the orders db', assignee: worker, evidenceRequirements: ['a checksum of the dump'] }],
    });
    const cardId = added.cards[0]!.id;
    // Over the queue a claim looks once and answers (the gateway is what waits): look until the card is dispatched.
    const claim = await eventually('the card dispatched and claimed', async () => {
      const tried = await actAs<{ claimToken?: string; card?: { id: string } }>(worker, 'board.claimCard', { assignee: worker, boardId: BOARD, waitSeconds: 0 });
      return tried.claimToken ? tried : undefined;
    });
    expect(claim.card?.id).toBe(cardId);
    await actAs(worker, 'board.submitCard', {
      boardId: BOARD,
      cardId,
      claimToken: claim.claimToken,
      summary: 'dumped',
      evidence: [{ kind: 'tool_result', summary: 'sha256 checksum of the dump: 9f2c', covers: ['r1'] }],
    });
    return cardId;
  };

  it.each(OLLAMA_FAILURE_MODES)('%s: the rule result stands, and the answer says why in public words only', async (mode) => {
    const cardId = await submitted();
    rig.ollama.reset();
    log.length = 0;
    const undo = await rig.fail(mode, { model: MODEL });
    let answer: ReviewAnswer;
    try {
      answer = await actAs<ReviewAnswer>('verifier-1', 'board.reviewCard', { boardId: BOARD, cardId, reviewer: 'verifier-1', decision: 'auto' });
    } finally {
      await undo();
    }
    expect(answer).toMatchObject({ decision: 'approve', card: { id: cardId, status: 'verified' } });
    expect(answer.reasons.at(-1)).toBe(NOTE[mode]);
    expect(answer.card.lastReview?.verifier?.llm).toEqual({ ran: true, model: MODEL, note: NOTE[mode] });
    expect(rig.internalsIn(JSON.stringify(answer))).toEqual([]);
    // The card as the board shows it afterwards holds the same words, and no more.
    const shown = await actAs('verifier-1', 'board.show', { boardId: BOARD });
    expect(JSON.stringify(shown)).toContain(NOTE[mode]);
    expect(rig.internalsIn(JSON.stringify(shown))).toEqual([]);
    if (mode !== 'malformed_content') expect(log.join('')).toContain(`"ollama":"${rig.url}"`);
  });

  it('the log keeps what the answer leaves out: the refused address and the driver code', async () => {
    const cardId = await submitted();
    log.length = 0;
    const undo = await rig.fail('refused', { model: MODEL });
    try {
      await actAs('verifier-1', 'board.reviewCard', { boardId: BOARD, cardId, reviewer: 'verifier-1', decision: 'auto' });
    } finally {
      await undo();
    }
    const line = log.find((l) => l.includes('LLM verifier failed'));
    expect(line).toContain('"failure":"unreachable"');
    expect(line).toContain('ECONNREFUSED');
  });
});
