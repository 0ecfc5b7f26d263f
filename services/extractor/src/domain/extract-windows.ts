import { z } from 'zod';
import { ARTIFACT_LIMITS, type RequirementInput } from '@vouch/contracts';
import { escapeRegExp, mentionLines, termRegExp, termsOf } from './requirement-terms.js';
import type { ProposedResult } from './finalize-extract.js';

/**
 * Windowing for model extraction: an oversized source is never sent whole.
 * Candidate lines are found by lexical search of each requirement's terms;
 * each prompt holds one small window of numbered lines around candidates and
 * only the requirements those candidates mention, so every prompt stays under
 * a fixed size whatever the file's size.
 */
export interface WindowLimits {
  /** Largest prompt (system + user) in characters. */
  maxPromptChars: number;
  /** Lines of context on each side of a candidate line. */
  contextLines: number;
  /** A source line is clipped to this many characters inside a prompt. */
  lineChars: number;
  /** Windows tried per extract, at most. */
  maxWindows: number;
}

export const DEFAULT_WINDOW_LIMITS: WindowLimits = { maxPromptChars: 3_000, contextLines: 4, lineChars: 160, maxWindows: 8 };

export interface ExtractWindow {
  /** 1-based inclusive. */
  startLine: number;
  endLine: number;
  /** Requirement ids whose candidate lines fall in this window. */
  requirementIds: string[];
}

export const EXTRACT_SYSTEM_PROMPT =
  'You extract exact facts from source code. You see numbered lines of one file. For each requirement, find the line that defines its value. ' +
  'Answer only with JSON matching the schema. For a requirement you find: found=true, value exactly as written, line = its line number, quote = an exact substring of that line containing the value. ' +
  'If the lines shown do not define it, found=false. Never guess or convert values.';

/** How strongly a line suggests a definition: `term: value` or `term = value` beats a mere mention. */
function lineScore(line: string, terms: readonly string[]): number {
  return terms.some((t) => termRegExp(t, 'i').test(line) && new RegExp(`${escapeRegExp(t)}["']?\\s*(?::=|=>|:|=)(?!=)`, 'i').test(line)) ? 2 : 1;
}

/**
 * Candidate windows, best first: a window's score is, per requirement, its
 * best line (a definition-like line 2, a mention 1), summed; ties go to the
 * earlier window. Overlapping spans merge.
 */
export function planWindows(lines: readonly string[], requirements: readonly RequirementInput[], limits: WindowLimits = DEFAULT_WINDOW_LIMITS): ExtractWindow[] {
  type Span = ExtractWindow & { scores: Map<string, number> };
  const spans: Span[] = [];
  for (const req of requirements) {
    const terms = termsOf(req);
    for (const line of mentionLines(lines, terms, 200)) {
      spans.push({
        startLine: Math.max(1, line - limits.contextLines),
        endLine: Math.min(lines.length, line + limits.contextLines),
        requirementIds: [req.id],
        scores: new Map([[req.id, lineScore(lines[line - 1]!, terms)]]),
      });
    }
  }
  spans.sort((a, b) => a.startLine - b.startLine);
  const merged: Span[] = [];
  for (const s of spans) {
    const last = merged.at(-1);
    if (last && s.startLine <= last.endLine + 1 && s.endLine - last.startLine <= limits.contextLines * 4) {
      last.endLine = Math.max(last.endLine, s.endLine);
      for (const id of s.requirementIds) if (!last.requirementIds.includes(id)) last.requirementIds.push(id);
      for (const [id, score] of s.scores) last.scores.set(id, Math.max(last.scores.get(id) ?? 0, score));
    } else merged.push({ ...s, requirementIds: [...s.requirementIds], scores: new Map(s.scores) });
  }
  const total = (w: Span) => [...w.scores.values()].reduce((a, b) => a + b, 0);
  return merged
    .sort((a, b) => total(b) - total(a) || a.startLine - b.startLine)
    .map(({ startLine, endLine, requirementIds }) => ({ startLine, endLine, requirementIds }));
}

export interface ExtractPrompt {
  system: string;
  user: string;
  /** system + user characters: what the harness reports as the isolated prompt size. */
  chars: number;
  /** The lines actually shown (the window may be trimmed to fit). */
  startLine: number;
  endLine: number;
}

function requirementLine(req: RequirementInput): string {
  return `- ${req.id}${req.description ? `: ${req.description.slice(0, 200)}` : ''}`;
}

/** The prompt for one window, trimmed line by line from its ends until it fits maxPromptChars. */
export function buildPrompt(lines: readonly string[], window: ExtractWindow, requirements: readonly RequirementInput[], limits: WindowLimits = DEFAULT_WINDOW_LIMITS): ExtractPrompt {
  const reqs = requirements.filter((r) => window.requirementIds.includes(r.id));
  const head = `Requirements:\n${reqs.map(requirementLine).join('\n')}\n\nLines:\n`;
  const shown = (n: number) => `${n}: ${lines[n - 1]!.slice(0, limits.lineChars)}`;
  let start = window.startLine;
  let end = window.endLine;
  const size = () => EXTRACT_SYSTEM_PROMPT.length + head.length + Array.from({ length: end - start + 1 }, (_, i) => shown(start + i).length + 1).reduce((a, b) => a + b, 0);
  const middle = Math.floor((window.startLine + window.endLine) / 2);
  while (size() > limits.maxPromptChars && end > start) {
    if (end - middle >= middle - start) end -= 1;
    else start += 1;
  }
  const body = Array.from({ length: end - start + 1 }, (_, i) => shown(start + i)).join('\n');
  const user = `${head}${body}\n`;
  return { system: EXTRACT_SYSTEM_PROMPT, user, chars: EXTRACT_SYSTEM_PROMPT.length + user.length, startLine: start, endLine: end };
}

/** The structured output the model must produce (sent to Ollama as `format`). */
export const ModelAnswerSchema = z.object({
  results: z.array(
    z.object({
      id: z.string(),
      found: z.boolean(),
      value: z.string(),
      line: z.number().int(),
      quote: z.string(),
      confidence: z.number().min(0).max(1),
    }),
  ),
});
export type ModelAnswer = z.infer<typeof ModelAnswerSchema>;

export function modelAnswerJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ModelAnswerSchema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** Parses the model's content string; the schema is enforced by Ollama's grammar and checked again here. */
export function parseModelAnswer(content: string): { ok: true; answer: ModelAnswer } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch {
    return { ok: false, error: 'the model answer is not JSON' };
  }
  const parsed = ModelAnswerSchema.safeParse(raw);
  return parsed.success ? { ok: true, answer: parsed.data } : { ok: false, error: `the model answer does not fit the schema: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
}

/** A model's claim for one requirement, as a proposed result (anchors are verified later). */
export function proposalFromAnswer(item: ModelAnswer['results'][number]): ProposedResult | undefined {
  if (!item.found) return undefined;
  return {
    id: item.id,
    status: 'satisfied',
    value: item.value.slice(0, ARTIFACT_LIMITS.valueChars),
    anchor: { startLine: item.line, endLine: item.line, quote: item.quote.slice(0, ARTIFACT_LIMITS.quoteChars) },
    confidence: item.confidence,
  };
}
