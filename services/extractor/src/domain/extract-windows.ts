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
  /** system + user characters (UTF-16 code units, as the prompt metric counts them): never above maxPromptChars. */
  chars: number;
  /** The requirements this prompt asks for: a window's requirements may be split across prompts. */
  requirementIds: string[];
  /** The lines actually shown (the window may be trimmed to fit). */
  startLine: number;
  endLine: number;
}

const REQUIREMENTS_HEAD = 'Requirements:\n';
const LINES_HEAD = '\n\nLines:\n';
/** Longest description a requirement line shows, before any clipping to fit. */
const DESCRIPTION_CHARS = 200;

/** The first `n` UTF-16 units of `s`, never ending inside a surrogate pair. */
function clipText(s: string, n: number): string {
  if (s.length <= n) return s;
  const cut = s.slice(0, Math.max(0, n));
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

function requirementLine(req: RequirementInput, room: number): string {
  const id = `- ${req.id}`;
  if (!req.description) return id;
  // A description is a help, the id is the question: the description gives way first.
  const descRoom = Math.min(DESCRIPTION_CHARS, room - id.length - 2);
  return descRoom > 0 ? `${id}: ${clipText(req.description, descRoom)}` : id;
}

/**
 * The prompts for one window, each at most maxPromptChars whatever the
 * lines and requirements look like. The requirements the window names are
 * split into as many prompts as their lines need (twenty requirements that
 * one line mentions do not make one oversized prompt), their descriptions
 * clipped when one alone would not fit; the window's lines are trimmed from
 * its ends toward its middle, each clipped to lineChars, and a line longer
 * than the room left is clipped to it. Every prompt shows at least one line.
 */
export function buildPrompts(lines: readonly string[], window: ExtractWindow, requirements: readonly RequirementInput[], limits: WindowLimits = DEFAULT_WINDOW_LIMITS): ExtractPrompt[] {
  const reqs = requirements.filter((r) => window.requirementIds.includes(r.id));
  const room = limits.maxPromptChars - EXTRACT_SYSTEM_PROMPT.length - REQUIREMENTS_HEAD.length - LINES_HEAD.length - 1;
  // Room kept for lines: at least one whole clipped line with its number, and most of the room when there is plenty.
  const lineRoom = Math.max(limits.lineChars + String(window.endLine).length + 2, Math.floor(room * 0.4));
  const headRoom = Math.max(0, room - lineRoom);

  const groups: string[][] = [];
  let group: string[] = [];
  let used = 0;
  for (const req of reqs) {
    const line = requirementLine(req, headRoom);
    const cost = line.length + (group.length > 0 ? 1 : 0);
    if (group.length > 0 && used + cost > headRoom) {
      groups.push(group);
      group = [];
      used = 0;
    }
    group.push(line);
    used += group.length > 1 ? line.length + 1 : line.length;
  }
  if (group.length > 0 || groups.length === 0) groups.push(group);

  let offset = 0;
  return groups.map((reqLines) => {
    const ids = reqs.slice(offset, offset + reqLines.length).map((r) => r.id);
    offset += reqLines.length;
    const head = `${REQUIREMENTS_HEAD}${reqLines.join('\n')}${LINES_HEAD}`;
    const fixed = EXTRACT_SYSTEM_PROMPT.length + head.length + 1;
    const shown = (n: number) => `${n}: ${clipText(lines[n - 1] ?? '', limits.lineChars)}`;
    let start = window.startLine;
    let end = window.endLine;
    const bodyChars = () => {
      let total = 0;
      for (let n = start; n <= end; n++) total += shown(n).length + 1;
      return total - 1;
    };
    const middle = Math.floor((window.startLine + window.endLine) / 2);
    while (fixed + bodyChars() > limits.maxPromptChars && end > start) {
      if (end - middle >= middle - start) end -= 1;
      else start += 1;
    }
    let body = Array.from({ length: end - start + 1 }, (_, i) => shown(start + i)).join('\n');
    if (fixed + body.length > limits.maxPromptChars) {
      // One line is left and it is still too long: show what fits of it.
      const prefix = `${start}: `;
      body = `${prefix}${clipText(lines[start - 1] ?? '', limits.maxPromptChars - fixed - prefix.length)}`;
    }
    const user = `${head}${body}\n`;
    return { system: EXTRACT_SYSTEM_PROMPT, user, chars: EXTRACT_SYSTEM_PROMPT.length + user.length, requirementIds: ids, startLine: start, endLine: end };
  });
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
