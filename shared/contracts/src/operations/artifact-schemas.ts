import { z } from 'zod';
import { text } from '../text.js';
import { IsoTimeSchema } from './common.js';
import { ARTIFACT_PATH_MAX_CHARS, artifactPathProblem, artifactPathTextProblem } from './artifact-path.js';

/**
 * Bounds of the extractor's operations. A body is what a caller read (a
 * source file, a tool output); it travels in a JSON request, so it stays well
 * under the gateway's body limit.
 */
export const ARTIFACT_LIMITS = {
  workspaceChars: 128,
  bodyChars: 8_000_000,
  requirements: 20,
  requirementIdChars: 64,
  requirementDescriptionChars: 300,
  termsPerRequirement: 8,
  termChars: 64,
  /** An unresolved requirement's reason, in characters: bounded so a parent's context stays small. */
  reasonChars: 300,
  /** An anchor's quote: one definition line, not a passage. */
  quoteChars: 240,
  valueChars: 200,
  recoveryItems: 5,
  grepPatternChars: 512,
  grepPathPrefixChars: ARTIFACT_PATH_MAX_CHARS,
  /**
   * Default and largest byte cap of a grep result: the matches as they are
   * serialized. Job results are capped at 1 MiB by the platform; what is left
   * holds the provenance and the narrowing advice.
   */
  grepDefaultCapBytes: 1_000_000,
  grepMaxCapBytes: 1_000_000,
  /** The largest body one materialization delivers whole (serialized); a larger one is over budget whatever the caller's budget. */
  materializeMaxBodyBytes: 900_000,
  /** Partial or capped reads a grep result names (provenance.partialReads); partialReadsTotal counts them all. */
  grepPartialReadsListed: 50,
  budgetChars: 8_000_000,
} as const;

export const Sha256Schema = text().regex(/^[0-9a-f]{64}$/, 'a hash is 64 lowercase hex characters: the sha256 the extractor returned for the artifact');

export const WorkspaceSchema = text()
  .min(1, 'workspace must name the workspace (repository or checkout) the file belongs to')
  .max(ARTIFACT_LIMITS.workspaceChars, `workspace is at most ${ARTIFACT_LIMITS.workspaceChars} characters`)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'workspace is letters, digits, ., _ and -, starting with a letter or digit (e.g. router-firmware)');

/**
 * A workspace-relative path, in Unicode NFC from here on: a name typed with
 * combining accents (as macOS file systems hand it out) and the same name
 * precomposed are one artifact, whatever hashes, stores or compares it next.
 * The extractor normalises the rest (`./a//b` is `a/b`).
 */
export const ArtifactPathSchema = text()
  .check((ctx) => {
    const problem = artifactPathProblem(ctx.value);
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value, continue: false });
  })
  .overwrite((path) => path.normalize('NFC'));

/** The start of artifact paths, held to the same characters as a path and compared in NFC like one. */
export const ArtifactPathPrefixSchema = text()
  .max(ARTIFACT_LIMITS.grepPathPrefixChars, `pathPrefix is at most ${ARTIFACT_LIMITS.grepPathPrefixChars} characters`)
  .check((ctx) => {
    const problem = artifactPathTextProblem(ctx.value, 'pathPrefix');
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value, continue: false });
  })
  .overwrite((prefix) => prefix.normalize('NFC'));

export const ArtifactIdSchema = text().regex(/^art-[0-9a-f]{24}$/, 'an artifact id looks like art-0f3a…: use the artifactId artifact.read returned');

/** Lines are 1-based and inclusive; bytes are 0-based, end exclusive (UTF-8 offsets). */
export const ArtifactRangeSchema = z.discriminatedUnion('unit', [
  z
    .object({
      unit: z.literal('lines'),
      start: z.number().int('start is a line number').min(1, 'lines start at 1'),
      end: z.number().int('end is a line number').min(1, 'lines start at 1'),
    })
    .strict()
    .refine((r) => r.end >= r.start, { message: 'end must be at or after start (lines are inclusive)', path: ['end'] }),
  z
    .object({
      unit: z.literal('bytes'),
      start: z.number().int('start is a byte offset').min(0, 'byte offsets start at 0'),
      end: z.number().int('end is a byte offset').min(1, 'end is exclusive and past start'),
    })
    .strict()
    .refine((r) => r.end > r.start, { message: 'end must be after start (bytes are end-exclusive)', path: ['end'] }),
]);
export type ArtifactRange = z.infer<typeof ArtifactRangeSchema>;

/** full: the whole file. partial: a line or byte range of it. capped: the caller's tool cut the read short. */
export const FidelitySchema = z.enum(['full', 'partial', 'capped']);
export type Fidelity = z.infer<typeof FidelitySchema>;

/** available: the current revision. superseded: the file has changed since. unavailable: the file is gone or its body was purged. */
export const AvailabilitySchema = z.enum(['available', 'superseded', 'unavailable']);
export type Availability = z.infer<typeof AvailabilitySchema>;

/** One recorded read: canonical evidence of what the caller saw. */
export const ArtifactSchema = z.object({
  artifactId: ArtifactIdSchema,
  workspace: text(),
  path: text(),
  /** sha256 of the body (the bytes read, UTF-8). */
  hash: Sha256Schema,
  /** Increases by one each time the path's content hash changes; the same hash again is the same revision. */
  revision: z.number().int().positive(),
  /** null: the whole file. */
  range: ArtifactRangeSchema.nullable(),
  fidelity: FidelitySchema,
  availability: AvailabilitySchema,
  byteSize: z.number().int().nonnegative(),
  charCount: z.number().int().nonnegative(),
  lineCount: z.number().int().nonnegative(),
  recordedAt: IsoTimeSchema,
});
export type Artifact = z.infer<typeof ArtifactSchema>;

/** A read that found the path's content changed: the older evidence is superseded, and the fresh read is justified. */
export const RereadSchema = z.object({
  reason: z.enum(['first_read', 'hash_changed', 'content_changed', 'reappeared']),
  previousRevision: z.number().int().nonnegative(),
  previousHash: Sha256Schema.nullable(),
  /** Artifacts of the path that this read superseded. */
  superseded: z.number().int().nonnegative(),
  justified: z.literal(true),
});

export const RequirementInputSchema = z
  .object({
    id: text()
      .min(1, 'a requirement id names the fact, e.g. baudRate')
      .max(ARTIFACT_LIMITS.requirementIdChars, `a requirement id is at most ${ARTIFACT_LIMITS.requirementIdChars} characters`)
      .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'a requirement id is an identifier: letters, digits, _, . and -, e.g. baudRate'),
    description: text()
      .trim()
      .min(1)
      .max(ARTIFACT_LIMITS.requirementDescriptionChars, `a requirement description is at most ${ARTIFACT_LIMITS.requirementDescriptionChars} characters`)
      .optional()
      .describe('What exactly is needed, e.g. "the exact baudRate the UART is configured with".'),
    terms: z
      .array(text().trim().min(1).max(ARTIFACT_LIMITS.termChars, `a search term is at most ${ARTIFACT_LIMITS.termChars} characters`))
      .min(1)
      .max(ARTIFACT_LIMITS.termsPerRequirement, `at most ${ARTIFACT_LIMITS.termsPerRequirement} search terms per requirement`)
      .optional()
      .describe('Words to search the source for; default: the id.'),
  })
  .strict();
export type RequirementInput = z.infer<typeof RequirementInputSchema>;

export const RequirementsSchema = z
  .array(RequirementInputSchema)
  .min(1, 'requirements must list at least one fact to extract, e.g. [{"id": "baudRate"}]')
  .max(ARTIFACT_LIMITS.requirements, `at most ${ARTIFACT_LIMITS.requirements} requirements per extract: split the rest into another call`)
  .refine((reqs) => new Set(reqs.map((r) => r.id)).size === reqs.length, { message: 'requirement ids must be unique' });

/** Where a satisfied requirement stands in the source: verified byte for byte against the stored body. */
export const AnchorSchema = z.object({
  /** Lines of the source artifact's body, 1-based inclusive. */
  startLine: z.number().int().positive(),
  endLine: z.number().int().positive(),
  /** The exact text within those lines. */
  quote: text(),
});
export type Anchor = z.infer<typeof AnchorSchema>;

/** A part of a file a read did not hold: lines 1-based inclusive, bytes 0-based end-exclusive; `end: null` runs to the end of the file. */
export const UnreadPartSchema = z.object({
  unit: z.enum(['lines', 'bytes']),
  start: z.number().int().nonnegative(),
  end: z.number().int().positive().nullable(),
});
export type UnreadPart = z.infer<typeof UnreadPartSchema>;

export const RecoverySchema = z.object({
  /** Line ranges of the source to read next. */
  readLines: z.array(z.object({ start: z.number().int().positive(), end: z.number().int().positive() })),
  /** What to search for (artifact.grep patterns). */
  search: z.array(text()),
  /** Over a partial or capped read: the parts of the file it did not hold, to read (artifact.read with range) before extracting again. */
  readRest: z.object({ path: text(), parts: z.array(UnreadPartSchema) }).optional(),
});

/**
 * not_in_part_read: the source is a partial or capped read, and the part read
 * does not define the value; it may be in the rest (recovery.readRest). Never
 * `not_found` for such a source: a part cannot prove an absence.
 */
export const UNRESOLVED_CODES = ['not_found', 'ambiguous', 'anchor_failed', 'model_unresolved', 'model_failed', 'window_limit', 'not_in_part_read'] as const;

export const RequirementResultSchema = z.discriminatedUnion('status', [
  z.object({
    id: text(),
    status: z.literal('satisfied'),
    value: text(),
    anchor: AnchorSchema,
    confidence: z.number().min(0).max(1),
  }),
  z.object({
    id: text(),
    status: z.literal('unresolved'),
    code: z.enum(UNRESOLVED_CODES),
    reason: text().max(ARTIFACT_LIMITS.reasonChars),
    recovery: RecoverySchema,
  }),
]);
export type RequirementResult = z.infer<typeof RequirementResultSchema>;

/** Computed by the service from the results, never taken from a model. */
export const CoverageSchema = z.object({
  total: z.number().int().positive(),
  satisfied: z.number().int().nonnegative(),
  unresolved: z.number().int().nonnegative(),
  /** True only when every requirement is satisfied. */
  complete: z.boolean(),
});
export type Coverage = z.infer<typeof CoverageSchema>;

export const ExtractorIdentitySchema = z.object({
  kind: z.enum(['deterministic', 'llm']),
  name: text(),
  version: text(),
  /** The Ollama model, for kind llm. */
  model: z.object({ name: text(), digest: text() }).nullable(),
  node: text(),
  /** The approved GPU the model ran on, for kind llm. */
  gpuUuid: text().nullable(),
});
export type ExtractorIdentity = z.infer<typeof ExtractorIdentitySchema>;

/** A branch extract: a derived artifact linked to its source's hash and range. */
export const DerivedExtractSchema = z.object({
  extractId: text(),
  source: z.object({ artifactId: ArtifactIdSchema, hash: Sha256Schema, revision: z.number().int().positive(), range: ArtifactRangeSchema.nullable(), fidelity: FidelitySchema }),
  requirements: z.array(RequirementResultSchema),
  coverage: CoverageSchema,
  extractor: ExtractorIdentitySchema,
  /** 0..1: the mean per-requirement confidence, an unresolved requirement counting 0. */
  confidence: z.number().min(0).max(1),
  /** The compact evidence a parent receives: one line per requirement. */
  evidence: text(),
  evidenceChars: z.number().int().nonnegative(),
  /** Windows of the source the extractor looked at, and the largest prompt it sent (0 for the deterministic extractor). */
  windows: z.object({ count: z.number().int().nonnegative(), largestPromptChars: z.number().int().nonnegative() }),
  createdAt: IsoTimeSchema,
});
export type DerivedExtract = z.infer<typeof DerivedExtractSchema>;

export const MATERIALIZE_DECISIONS = ['full_body', 'branch_extract', 'over_budget', 'reread_required'] as const;
export type MaterializeDecision = (typeof MATERIALIZE_DECISIONS)[number];

const CurrentRefSchema = z.object({ artifactId: ArtifactIdSchema, hash: Sha256Schema, revision: z.number().int().positive() }).nullable();

export const MaterializeResultSchema = z.discriminatedUnion('decision', [
  z.object({ decision: z.literal('full_body'), edgeId: text(), artifact: ArtifactSchema, body: z.string(), bodyChars: z.number().int().nonnegative() }),
  z.object({
    decision: z.literal('branch_extract'),
    edgeId: text(),
    artifact: ArtifactSchema,
    bodyChars: z.number().int().nonnegative(),
    budgetChars: z.number().int().positive().nullable(),
    extract: DerivedExtractSchema,
  }),
  z.object({
    decision: z.literal('over_budget'),
    edgeId: text(),
    artifact: ArtifactSchema,
    bodyChars: z.number().int().nonnegative(),
    /** The caller's budget, or null when the body is over what one answer carries. */
    budgetChars: z.number().int().positive().nullable(),
    instruction: text(),
  }),
  z.object({
    decision: z.literal('reread_required'),
    edgeId: text(),
    artifact: ArtifactSchema,
    reason: z.enum(['superseded', 'hash_mismatch', 'unavailable']),
    current: CurrentRefSchema,
    instruction: text(),
  }),
]);
export type MaterializeResult = z.infer<typeof MaterializeResultSchema>;

export const GrepMatchSchema = z.object({
  artifactId: ArtifactIdSchema,
  path: text(),
  /** 1-based line of the artifact body. */
  line: z.number().int().positive(),
  text: z.string(),
});

export const GrepResultSchema = z.object({
  /** complete: every current artifact searched whole and every match returned. partial: a cap was hit, or a target is a partial or capped read; never read as "not found". */
  status: z.enum(['complete', 'partial']),
  found: z.boolean(),
  matches: z.array(GrepMatchSchema),
  provenance: z.object({
    capBytes: z.number().int().positive(),
    returnedBytes: z.number().int().nonnegative(),
    scanCapBytes: z.number().int().positive(),
    scannedBytes: z.number().int().nonnegative(),
    filesTotal: z.number().int().nonnegative(),
    filesScanned: z.number().int().nonnegative(),
    matchesReturned: z.number().int().nonnegative(),
    /** Matching lines counted in the files scanned (at least matchesReturned). */
    matchesCounted: z.number().int().nonnegative(),
    truncated: z.boolean(),
    /** partial_reads: some files searched were read only in part (partialReads names them); a match may be in what was not read. */
    truncatedBy: z.array(z.enum(['result_cap', 'scan_cap', 'line_cap', 'partial_reads'])),
    /** The targets that are partial or capped reads (files with no full read recorded), at most ARTIFACT_LIMITS.grepPartialReadsListed of them. */
    partialReads: z
      .array(z.object({ artifactId: ArtifactIdSchema, path: text(), fidelity: z.enum(['partial', 'capped']), range: ArtifactRangeSchema.nullable() }))
      .optional(),
    /** How many targets are partial or capped reads, listed or not. */
    partialReadsTotal: z.number().int().nonnegative().optional(),
  }),
  /** Deterministic advice for a capped result: the same search gives the same advice. */
  narrowing: z
    .object({
      topFiles: z.array(z.object({ path: text(), matches: z.number().int().positive() })),
      pathPrefix: text().nullable(),
      tighterPatterns: z.array(text()),
      instruction: text(),
    })
    .nullable(),
});
export type GrepResult = z.infer<typeof GrepResultSchema>;
