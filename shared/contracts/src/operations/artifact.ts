import { z } from 'zod';
import { text } from '../text.js';
import { defineOperation } from '../operation.js';
import { QUEUES } from '../queues.js';
import {
  ARTIFACT_LIMITS,
  ArtifactIdSchema,
  ArtifactPathPrefixSchema,
  ArtifactPathSchema,
  ArtifactRangeSchema,
  ArtifactSchema,
  DerivedExtractSchema,
  GrepResultSchema,
  MaterializeResultSchema,
  RequirementsSchema,
  RereadSchema,
  Sha256Schema,
  WorkspaceSchema,
} from './artifact-schemas.js';

/**
 * Why a body is refused as binary, or undefined. Text files carry tabs, line
 * breaks, form feeds and ANSI escapes; other C0 controls (and DEL) mean the
 * bytes were not text, and a line-based search, a quote or a prompt over them
 * would be meaningless.
 */
export function binaryBodyProblem(value: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  const at = value.search(/[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f]/);
  if (at === -1) return undefined;
  return `content looks binary (control character U+${value.charCodeAt(at).toString(16).padStart(4, '0')} at offset ${at}): record text files only`;
}

const ContentSchema = text()
  .max(ARTIFACT_LIMITS.bodyChars, `content is at most ${ARTIFACT_LIMITS.bodyChars} characters: record a line range of the file instead (range)`)
  .check((ctx) => {
    const problem = binaryBodyProblem(ctx.value);
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value, continue: false });
  });

export const artifactRead = defineOperation({
  name: 'artifact.read',
  summary: 'Record a file read as canonical evidence',
  description:
    'Records what you read from a file: the whole file, or a line or byte range of it (range), or a read your tool cut short (capped: true). ' +
    'The answer is the artifact: id, content hash, revision, range, fidelity (full, partial, capped) and availability. Reading the same content again returns the same artifact; ' +
    'a changed file gets a new revision, supersedes the old evidence and is recorded as a justified reread (no penalty). Use the artifactId and hash with artifact.materialize ' +
    'before an edit, and artifact.extract for the facts you need from a large file. Set gone: true (without content) when the file no longer exists.',
  owner: { queue: QUEUES.extractor },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/artifacts/read' },
  scope: 'artifacts:write',
  input: z
    .object({
      workspace: WorkspaceSchema,
      path: ArtifactPathSchema.describe('Relative to the workspace root, forward slashes, no .. segments.'),
      content: ContentSchema.optional().describe('The text you read (UTF-8). Required unless gone is true.'),
      range: ArtifactRangeSchema.optional().describe('The part of the file content holds; leave it out for the whole file.'),
      capped: z.boolean().optional().describe('True when your tool cut the read short at a size limit.'),
      fileSha256: Sha256Schema.optional().describe('sha256 of the whole file when you know it; lets a partial read join the right revision.'),
      gone: z.boolean().optional().describe('True when the file no longer exists: its artifacts become unavailable.'),
    })
    .strict()
    .superRefine((input, ctx) => {
      if (input.gone) {
        if (input.content !== undefined) ctx.addIssue({ code: 'custom', path: ['content'], message: 'content must be left out when gone is true' });
      } else if (input.content === undefined) {
        ctx.addIssue({ code: 'custom', path: ['content'], message: 'content is required: pass the text you read (or gone: true for a deleted file)' });
      }
    }),
  output: ArtifactSchema.extend({ alreadyRecorded: z.boolean(), reread: RereadSchema.nullable() }).or(
    z.object({ workspace: text(), path: text(), gone: z.literal(true), unavailable: z.number().int().nonnegative() }),
  ),
  agentFacing: true,
  idempotent: true,
  example: { workspace: 'router-firmware', path: 'src/uart/config.ts', content: 'export const uart = {\n  baudRate: 115200,\n  channel: 3,\n};\n' },
});

export const artifactMaterialize = defineOperation({
  name: 'artifact.materialize',
  summary: 'Get the exact body of an artifact for an edit, or evidence within a budget',
  description:
    'Returns the exact body of an artifact you read, checked against the hash you believe is current. If the file changed, the artifact was superseded or is unavailable, ' +
    'the answer is decision reread_required with the reason and the current artifact: read the file again, never edit from a stale body. ' +
    'With budgetChars, the service decides: the full body if it fits, otherwise a branch extract of the requirements you pass (decision branch_extract, ' +
    'each requirement satisfied with a verified anchor or unresolved with a recovery); without requirements an oversized body answers over_budget with what to do.',
  owner: { queue: QUEUES.extractor },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/artifacts/:artifactId/materialize' },
  scope: 'artifacts:read',
  input: z
    .object({
      artifactId: ArtifactIdSchema,
      expectedHash: Sha256Schema.describe('The hash artifact.read returned: the body you believe is current.'),
      budgetChars: z.number().int().min(1).max(ARTIFACT_LIMITS.budgetChars).optional().describe('The most characters of evidence you can take.'),
      requirements: RequirementsSchema.optional().describe('What to extract when the body does not fit the budget.'),
    })
    .strict(),
  output: MaterializeResultSchema,
  agentFacing: true,
  example: { artifactId: 'art-0f3a9c2d4e5b6a7980112233', expectedHash: 'a'.repeat(64), budgetChars: 4000, requirements: [{ id: 'baudRate' }] },
});

export const artifactGrep = defineOperation({
  name: 'artifact.grep',
  summary: 'Search the current artifacts of a workspace, capped',
  description:
    'Searches the current (available) artifacts of a workspace for a regular expression (RE2 syntax: linear time, no backreferences or lookaround), line by line. ' +
    'The result is capped (capBytes, default 1 MB of matching lines). A capped result has status partial: it is never "not found". ' +
    'A search over files recorded only from partial or capped reads is partial too, and names those reads (provenance.partialReads): read them whole to search all of them. ' +
    'Narrow it with the advice it returns: a path prefix, the files with most matches, a tighter pattern.',
  owner: { queue: QUEUES.extractor },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/artifacts/grep' },
  scope: 'artifacts:read',
  input: z
    .object({
      workspace: WorkspaceSchema,
      pattern: text()
        .min(1, 'pattern must not be empty')
        .max(ARTIFACT_LIMITS.grepPatternChars, `pattern is at most ${ARTIFACT_LIMITS.grepPatternChars} characters`)
        .describe('An RE2 regular expression, matched against each line.'),
      pathPrefix: ArtifactPathPrefixSchema.optional().describe('Search only paths that start with this (e.g. src/uart/).'),
      ignoreCase: z.boolean().default(false),
      capBytes: z
        .number()
        .int()
        .min(1_024, 'capBytes is at least 1024')
        .max(ARTIFACT_LIMITS.grepMaxCapBytes, `capBytes is at most ${ARTIFACT_LIMITS.grepMaxCapBytes}`)
        .default(ARTIFACT_LIMITS.grepDefaultCapBytes),
    })
    .strict(),
  output: GrepResultSchema,
  agentFacing: true,
  example: { workspace: 'router-firmware', pattern: 'baudRate\\s*[:=]', pathPrefix: 'src/' },
  timeoutMs: 60_000,
});

const ExtractInput = z
  .object({
    artifactId: ArtifactIdSchema,
    expectedHash: Sha256Schema.optional().describe('When given, the extract is refused (409) unless the artifact still has this hash and is current.'),
    requirements: RequirementsSchema,
  })
  .strict();

export const artifactExtract = defineOperation({
  name: 'artifact.extract',
  summary: 'Extract required facts from a large artifact with a model on an approved GPU',
  description:
    'Starts a branch extraction of the facts you name (requirements) from an artifact, by a model running on an approved GPU; answers with a job handle (read it with jobs.get). ' +
    'The result is a derived artifact linked to the source hash and range: every requirement is satisfied with an anchor (lines and the exact quote, verified against the stored source) ' +
    'or unresolved with a reason and what to read or search next. Coverage is complete only when nothing is unresolved: never treat an incomplete extract as the whole answer. ' +
    'Over a partial or capped read, a fact the part does not define is not_in_part_read, with the parts of the file left to read (recovery.readRest), never not_found. ' +
    'The job waits in the queue until an approved GPU worker takes it; it never runs on a CPU.',
  owner: { queue: QUEUES.extractorGpu },
  mode: 'job',
  http: { method: 'POST', path: '/v1/artifacts/:artifactId/extract' },
  scope: 'artifacts:read',
  input: ExtractInput,
  output: DerivedExtractSchema,
  agentFacing: true,
  example: { artifactId: 'art-0f3a9c2d4e5b6a7980112233', requirements: [{ id: 'baudRate', description: 'the exact UART baudRate' }, { id: 'channel' }] },
  retry: { attempts: 3, backoffMs: 5_000 },
});

export const artifactExtractDeterministic = defineOperation({
  name: 'artifact.extractDeterministic',
  summary: 'Extract required facts from an artifact by exact anchoring, without a model',
  description:
    'The same contract as artifact.extract, done by the deterministic extractor (no model, runs on any node): a requirement is satisfied when the source defines it ' +
    'exactly once (e.g. `baudRate: 115200`), and unresolved, with the lines to read, when it is absent or defined with different values. Answers with a job handle.',
  owner: { queue: QUEUES.extractor },
  mode: 'job',
  http: { method: 'POST', path: '/v1/artifacts/:artifactId/extract-deterministic' },
  scope: 'artifacts:read',
  input: ExtractInput,
  output: DerivedExtractSchema,
  agentFacing: true,
  example: { artifactId: 'art-0f3a9c2d4e5b6a7980112233', requirements: [{ id: 'baudRate' }, { id: 'channel' }] },
});
