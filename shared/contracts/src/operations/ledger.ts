import { z } from 'zod';
import { text } from '../text.js';
import { defineOperation } from '../operation.js';
import { RESULT_PAGE_BYTES } from '../result-budget.js';
import { QUEUES } from '../queues.js';
import { BoardIdSchema } from './board-schemas.js';
import {
  CriticPacketSchema,
  CritiqueOutcomeSchema,
  DEFAULT_CYCLE_BUDGET,
  EVIDENCE_PAGE,
  EvidenceInputSchema,
  LEDGER_LIMITS,
  LedgerRunIdSchema,
  LedgerStatusSchema,
  LedgerViewSchema,
  OpenItemInputSchema,
  RenderFormSchema,
  ReviewPolicySchema,
} from './ledger-schemas.js';

export * from './ledger-schemas.js';

const RunIdInput = { runId: LedgerRunIdSchema };

export const ledgerOpen = defineOperation({
  name: 'ledger.open',
  summary: 'Open the completion ledger of an agent run',
  description:
    'Opens the claim/evidence ledger for a run, with its goal and review policy. Record evidence into it as tools finish, then propose completion: ' +
    'the run counts as completed only when a review approves every material claim against recorded evidence. ' +
    'Use policy fast for simple public tasks (only claims that something was done, changed, delivered, verified or found need evidence). ' +
    'Opening the same run again with the same goal and policy returns the existing ledger.',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/ledgers' },
  scope: 'ledger:write',
  input: z
    .object({
      ...RunIdInput,
      goal: text()
        .trim()
        .min(1, 'goal must state what the run is asked to do (the user request)')
        .max(LEDGER_LIMITS.goalChars, `goal is at most ${LEDGER_LIMITS.goalChars} characters: summarise the request`),
      policy: ReviewPolicySchema.default('full'),
      cycleBudget: z
        .number()
        .int('cycleBudget is a whole number of reviews')
        .min(1, 'cycleBudget is at least 1')
        .max(LEDGER_LIMITS.maxCycleBudget, `cycleBudget is at most ${LEDGER_LIMITS.maxCycleBudget}`)
        .optional()
        .describe(`Reviews allowed before unresolved changes end the run as incomplete_verification; the service default is ${DEFAULT_CYCLE_BUDGET}.`),
      boardId: BoardIdSchema.optional().describe('A board (board.create) whose unverified and blocked cards every review of this run counts as open items.'),
    })
    .strict(),
  output: LedgerViewSchema.extend({ alreadyOpened: z.boolean() }),
  agentFacing: true,
  example: { runId: 'run-2026-12-01-a', goal: 'Set the router baud rate to 115200 and confirm it', policy: 'full' },
  idempotent: true,
  errors: {
    409: 'The run already has a ledger with a different goal, policy or cycle budget: open the new task under a new run id.',
    413: `The run's ledger is open already and its claims, critiques and open items alone pass the ${RESULT_PAGE_BYTES}-byte limit on one answer: read it with ledger.render.`,
  },
});

export const ledgerRecordEvidence = defineOperation({
  name: 'ledger.recordEvidence',
  summary: 'Record observations into a run ledger',
  description:
    'Records one or more observations (tool results, file changes, delivery results, runtime observations, human input, critic feedback) with their success flags. ' +
    'Record failures as well as successes. Each item gets an id and a sequence number. Name the files, identifiers, numbers and URLs involved in the summary: ' +
    'claims are linked to evidence by what they share. The ledger records the agent of your API key as who recorded them (actors come from keys).',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/ledgers/:runId/evidence' },
  scope: 'ledger:write',
  input: z
    .object({
      ...RunIdInput,
      items: z
        .array(EvidenceInputSchema)
        .min(1, 'items must hold at least one observation')
        .max(LEDGER_LIMITS.evidencePerCall, `at most ${LEDGER_LIMITS.evidencePerCall} evidence items per call: send the rest in another ledger.recordEvidence call`),
    })
    .strict(),
  output: z.object({
    runId: text(),
    status: LedgerStatusSchema,
    version: z.number().int().positive(),
    recorded: z.array(z.object({ id: text(), seq: z.number().int().positive() })),
    evidenceCount: z.number().int().nonnegative(),
  }),
  agentFacing: true,
  example: { runId: 'run-2026-12-01-a', items: [{ kind: 'tool_result', toolName: 'shell', success: true, summary: 'cat config/router.yaml shows baudRate: 115200' }] },
  errors: {
    404: 'No ledger is open for this run: open one with ledger.open first.',
    409: 'The ledger is closed (approved or ended), would pass its evidence limit, or kept changing under concurrent writes (send it again).',
  },
});

export const ledgerProposeCompletion = defineOperation({
  name: 'ledger.proposeCompletion',
  summary: 'Propose that a run is complete, and have it reviewed',
  description:
    'Submits the task-complete summary, the answer the user will see and any open todos or board cards. The claims in them are reconciled with the recorded evidence ' +
    'and reviewed. It answers with a job handle; read the result with jobs.get. The result is the decision: approve (completed), request_changes (with the specific evidence missing; record it and propose again) ' +
    'or incomplete_verification (blocked, or the review budget is spent). Never report the task as completed unless the result says completed: true. ' +
    'The ledger records the agent of your API key as who proposed it.',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'job',
  http: { method: 'POST', path: '/v1/ledgers/:runId/completion' },
  scope: 'ledger:write',
  input: z
    .object({
      ...RunIdInput,
      summary: text()
        .trim()
        .min(1, 'summary must say what was done: the task-complete summary')
        .max(LEDGER_LIMITS.summaryChars, `summary is at most ${LEDGER_LIMITS.summaryChars} characters: state the claims compactly`),
      visibleAnswer: text()
        .max(LEDGER_LIMITS.visibleAnswerChars, `visibleAnswer is at most ${LEDGER_LIMITS.visibleAnswerChars} characters`)
        .optional()
        .describe('The answer the user will see; its claims are reviewed too.'),
      openItems: z
        .array(OpenItemInputSchema)
        .max(LEDGER_LIMITS.openItems, `at most ${LEDGER_LIMITS.openItems} open items: list the ones that block completion`)
        .default([])
        .describe('Todos or board cards still open; each one keeps the run from being approved until it is finished or removed.'),
    })
    .strict(),
  output: CritiqueOutcomeSchema,
  agentFacing: true,
  example: { runId: 'run-2026-12-01-a', summary: 'Set baudRate to 115200 in config/router.yaml and confirmed it with cat.' },
  retry: { attempts: 3, backoffMs: 2_000 },
});

export const ledgerGet = defineOperation({
  name: 'ledger.get',
  summary: 'Read a run ledger',
  description:
    'Returns the ledger of a run: goal, status, the claims of the latest completion attempt with their evidence, critiques, unresolved items, ' +
    `and one page of the recorded evidence (${EVIDENCE_PAGE.default} items by default, in recording order, and never more than fit in ${RESULT_PAGE_BYTES} bytes of JSON: ` +
    'evidencePage.truncated says a page stopped short for its size): pass evidencePage.nextAfter as evidenceAfter for the next page until it is null.',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/ledgers/:runId' },
  scope: 'ledger:read',
  input: z
    .object({
      ...RunIdInput,
      evidenceAfter: z.coerce.number().int('evidenceAfter is an evidence seq: pass evidencePage.nextAfter from the previous page').min(0).max(LEDGER_LIMITS.evidencePerLedger).default(0),
      evidenceLimit: z.coerce
        .number()
        .int('evidenceLimit is a whole number of items')
        .min(1, 'evidenceLimit is at least 1')
        .max(EVIDENCE_PAGE.max, `evidenceLimit is at most ${EVIDENCE_PAGE.max}: page through the rest with evidenceAfter`)
        .default(EVIDENCE_PAGE.default),
    })
    .strict(),
  output: LedgerViewSchema,
  agentFacing: true,
  example: { runId: 'run-2026-12-01-a', evidenceLimit: 50 },
  errors: { 413: `The ledger's claims, critiques and open items alone pass the ${RESULT_PAGE_BYTES}-byte limit on one answer, so no page of its evidence fits: read it with ledger.render.` },
  resource: { uriTemplate: 'vouch://ledgers/{runId}', name: 'ledger', mimeType: 'application/json' },
});

export const ledgerPacket = defineOperation({
  name: 'ledger.packet',
  summary: 'The critic packet of a review, exactly as the critic saw it',
  description: 'Returns the packet a review cycle was decided on (the latest by default) and the critic prompt built from it, for audit.',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/ledgers/:runId/packet' },
  scope: 'ledger:read',
  input: z
    .object({
      ...RunIdInput,
      cycle: z.coerce.number().int('cycle is a review number: 1, 2, ...').min(1, 'cycle starts at 1').max(LEDGER_LIMITS.maxCycleBudget).optional(),
    })
    .strict(),
  output: z.object({ runId: text(), cycle: z.number().int().positive(), packet: CriticPacketSchema, prompt: text() }),
  agentFacing: false,
  example: { runId: 'run-2026-12-01-a', cycle: 1 },
  errors: { 404: 'The run has no review yet, or none for that cycle.' },
});

export const ledgerRender = defineOperation({
  name: 'ledger.render',
  summary: 'Render a run ledger for a person',
  description:
    'Renders the ledger as text. admin: sections Done, Verified, Not verified / blocked and Evidence, with evidence ids. public: a compact answer citing evidence without ids or paths. ' +
    'The status comes back as its own field; an incomplete_verification run is never called completed. ' +
    `The text stays under ${RESULT_PAGE_BYTES} bytes of JSON: past that it stops at a line that says so (truncated: true), and ledger.get lists everything.`,
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/ledgers/:runId/render' },
  scope: 'ledger:read',
  input: z.object({ ...RunIdInput, form: RenderFormSchema.default('admin') }).strict(),
  output: z.object({ runId: text(), form: RenderFormSchema, status: LedgerStatusSchema, completed: z.boolean(), text: text(), truncated: z.boolean() }),
  agentFacing: false,
  example: { runId: 'run-2026-12-01-a', form: 'admin' },
  resource: { uriTemplate: 'vouch://ledgers/{runId}/render', name: 'ledger-render', mimeType: 'text/plain', textField: 'text' },
});
