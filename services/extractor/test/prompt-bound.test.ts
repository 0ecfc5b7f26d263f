// Issue 19, item 5: every model prompt stays within EXTRACTOR_MAX_PROMPT_CHARS
// (3,000 by default), whatever the lines look like and however many
// requirements one window carries.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ARTIFACT_LIMITS, type RequirementInput } from '@vouch/contracts';
import { DEFAULT_WINDOW_LIMITS, EXTRACT_SYSTEM_PROMPT, buildPrompts, planWindows, type WindowLimits } from '../src/domain/extract-windows.js';

/** Every prompt of every window, with the checks that hold whatever the input. */
function promptsOf(lines: readonly string[], requirements: readonly RequirementInput[], limits: WindowLimits) {
  const windows = planWindows(lines, requirements, limits);
  return windows.map((window) => ({ window, prompts: buildPrompts(lines, window, requirements, limits) }));
}

function checkBound(lines: readonly string[], requirements: readonly RequirementInput[], limits: WindowLimits): number {
  let largest = 0;
  for (const { window, prompts } of promptsOf(lines, requirements, limits)) {
    expect(prompts.length).toBeGreaterThan(0);
    // Each requirement of the window is asked in exactly one of its prompts.
    expect(prompts.flatMap((p) => p.requirementIds).sort()).toEqual([...window.requirementIds].sort());
    for (const p of prompts) {
      expect(p.chars).toBe(p.system.length + p.user.length);
      expect(p.chars).toBeLessThanOrEqual(limits.maxPromptChars);
      expect(p.system).toBe(EXTRACT_SYSTEM_PROMPT);
      // Every asked requirement is named, and at least one numbered line of the window is shown.
      for (const id of p.requirementIds) expect(p.user).toContain(`\n- ${id}`);
      expect(p.startLine).toBeGreaterThanOrEqual(window.startLine);
      expect(p.endLine).toBeLessThanOrEqual(window.endLine);
      expect(p.endLine).toBeGreaterThanOrEqual(p.startLine);
      expect(p.user).toMatch(new RegExp(`\\nLines:\\n${p.startLine}: `));
      largest = Math.max(largest, p.chars);
    }
  }
  return largest;
}

const twentyRequirements: RequirementInput[] = Array.from({ length: ARTIFACT_LIMITS.requirements }, (_, i) => ({
  id: `uartSetting${String(i).padStart(2, '0')}`,
  description: `the exact value the board's firmware configures for UART setting number ${i}, as written in the source, with its unit and base, not a default`,
}));

describe('prompt windows bounded by characters', () => {
  it('twenty requirements on one line make several prompts of at most 3,000 characters, not one of 4,790', () => {
    const line = twentyRequirements.map((r, i) => `${r.id}: ${i * 7}`).join(', ');
    const lines = ['// settings', `export const uart = { ${line} };`, '// end'];
    const windows = planWindows(lines, twentyRequirements);
    expect(windows).toHaveLength(1);
    expect(windows[0]!.requirementIds).toHaveLength(20);
    const prompts = buildPrompts(lines, windows[0]!, twentyRequirements);
    expect(prompts.length).toBeGreaterThan(1);
    // What one prompt holding all twenty would have been: the bug this bound fixes.
    const unbounded = EXTRACT_SYSTEM_PROMPT.length + twentyRequirements.map((r) => `- ${r.id}: ${r.description}`).join('\n').length + lines.join('\n').length;
    expect(unbounded).toBeGreaterThan(3_000);
    expect(checkBound(lines, twentyRequirements, DEFAULT_WINDOW_LIMITS)).toBeLessThanOrEqual(3_000);
  });

  it('a minified file (one line of 200,000 characters) and long descriptions stay within the bound', () => {
    const reqs = twentyRequirements.map((r) => ({ ...r, description: 'd'.repeat(ARTIFACT_LIMITS.requirementDescriptionChars) }));
    const lines = [`var a={${twentyRequirements.map((r) => `${r.id}:1`).join(',')},${'x'.repeat(200_000)}}`];
    expect(checkBound(lines, reqs, DEFAULT_WINDOW_LIMITS)).toBeLessThanOrEqual(3_000);
    expect(checkBound(lines, reqs, { ...DEFAULT_WINDOW_LIMITS, maxPromptChars: 1_000 })).toBeLessThanOrEqual(1_000);
  });

  it('property: over random requirement sets and line shapes, every prompt is at most maxPromptChars', () => {
    const ident = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/);
    const requirement = fc.record(
      {
        id: ident,
        // Sizes reach the maximum often: long descriptions are what overflows a prompt's head.
        description: fc.string({ minLength: 1, maxLength: ARTIFACT_LIMITS.requirementDescriptionChars, size: 'max', unit: fc.constantFrom('a', ' ', 'é', '😀', 'z', '\t') }),
        terms: fc.array(ident, { minLength: 1, maxLength: 3 }),
      },
      { requiredKeys: ['id'] },
    );
    const requirements = fc.uniqueArray(requirement, { minLength: 1, maxLength: ARTIFACT_LIMITS.requirements, size: 'max', selector: (r) => r.id });
    // A line: filler of any length (astral characters included), or definitions of some requirements packed on it.
    const mention = (r: RequirementInput) => r.terms?.[0] ?? r.id;
    const lineShape = (reqs: RequirementInput[]) =>
      fc.oneof(
        // Every requirement defined on one line (the case that gave 4,790 characters).
        fc.constant(reqs.map((r, i) => `${mention(r)}: ${i}`).join(', ')),
        fc.string({ maxLength: 400, unit: fc.constantFrom('x', ' ', '=', ':', '😀', 'ß') }),
        fc.string({ minLength: 500, maxLength: 6_000, unit: fc.constantFrom('y', ',', '"') }),
        fc.subarray(reqs, { minLength: 1 }).map((some) => some.map((r, i) => `${mention(r)}: ${i}`).join(', ')),
        fc.tuple(fc.subarray(reqs, { minLength: 1 }), fc.nat({ max: 5_000 })).map(([some, pad]) => `${'p'.repeat(pad)} ${some.map((r) => `${mention(r)} = "v"`).join('; ')}`),
      );
    const input = requirements.chain((reqs) =>
      fc.record({
        reqs: fc.constant(reqs),
        lines: fc.array(lineShape(reqs), { minLength: 1, maxLength: 60 }),
        maxPromptChars: fc.oneof(fc.constant(3_000), fc.integer({ min: 1_000, max: 6_000 })),
        contextLines: fc.integer({ min: 0, max: 12 }),
        lineChars: fc.integer({ min: 20, max: 400 }),
      }),
    );
    fc.assert(
      fc.property(input, ({ reqs, lines, maxPromptChars, contextLines, lineChars }) => {
        checkBound(lines, reqs, { maxPromptChars, contextLines, lineChars, maxWindows: 8 });
      }),
      { numRuns: 300 },
    );
  });
});
