import type { DerivedExtract, ExtractorIdentity, RequirementInput } from '@vouch/contracts';
import type { ArtifactRow } from './artifact-store.js';
import type { CachedBody } from './body-cache.js';
import { confidenceOf, coverageOf, finalizeResults, renderEvidence, type ProposedResult } from './domain/finalize-extract.js';
import { qualifyForPartialSource } from './domain/partial-source.js';

/** What an extractor (deterministic or model) proposes for one artifact. */
export interface Proposal {
  results: ProposedResult[];
  windows: number;
  largestPromptChars: number;
  /** Who made this proposal, as observed for it (the model extractor: the GPU its generations ran on); default the extractor's identity(). */
  identity?: ExtractorIdentity;
}

/** An extractor: its identity, and proposals for the requirements over the body's lines. */
export interface Extractor {
  identity(): ExtractorIdentity;
  propose(input: { lines: readonly string[]; body: CachedBody; requirements: readonly RequirementInput[] }): Promise<Proposal>;
}

/** The body as lines, numbered as BodyLines numbers them (a final newline ends the last line). */
export function bodyLineStrings(body: Buffer): string[] {
  if (body.length === 0) return [];
  const text = body.toString('utf8');
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/**
 * Runs an extractor and turns its proposals into a derived artifact: every
 * anchor verified against the stored body, a value missing from a partial or
 * capped read reported as not in the part read (never not found), coverage and
 * confidence computed here from the verified results, never taken from the
 * extractor.
 */
export async function deriveExtract(opts: {
  extractId: string;
  source: ArtifactRow;
  body: CachedBody;
  requirements: readonly RequirementInput[];
  extractor: Extractor;
  now: Date;
}): Promise<DerivedExtract> {
  const lines = bodyLineStrings(opts.body.body);
  const proposal = await opts.extractor.propose({ lines, body: opts.body, requirements: opts.requirements });
  const source = opts.source;
  const results = qualifyForPartialSource(finalizeResults(opts.body.body, opts.body.lines(), opts.requirements, proposal.results), {
    path: source.path,
    fidelity: source.fidelity,
    range: source.range,
    lineCount: source.line_count,
    byteSize: source.byte_size,
    endsWithNewline: opts.body.body.at(-1) === 0x0a,
  });
  const evidence = renderEvidence(results);
  return {
    extractId: opts.extractId,
    source: { artifactId: opts.source.artifact_id, hash: opts.source.hash, revision: opts.source.revision, range: opts.source.range, fidelity: opts.source.fidelity },
    requirements: results,
    coverage: coverageOf(results),
    extractor: proposal.identity ?? opts.extractor.identity(),
    confidence: confidenceOf(results),
    evidence,
    evidenceChars: evidence.length,
    windows: { count: proposal.windows, largestPromptChars: proposal.largestPromptChars },
    createdAt: opts.now.toISOString(),
  };
}
