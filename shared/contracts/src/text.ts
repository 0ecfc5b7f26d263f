import { z } from 'zod';

/**
 * Why a string cannot be stored, or undefined when it can. Postgres `text` and
 * `jsonb` refuse U+0000, and a lone UTF-16 surrogate has no UTF-8 encoding, so
 * either would fail deep inside a job (a 500 after pointless retries) instead
 * of at the edge as a 400 naming the field.
 */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL characters (\\u0000): remove them';
  if (!value.isWellFormed()) return 'must be well-formed Unicode: it holds an unpaired surrogate (\\ud800-\\udfff); send the text as UTF-8';
  return undefined;
}

/**
 * The one string type of the operation table: text that every store can hold.
 * Every string field of every operation input is built from it, so the
 * gateway answers 400 naming the field for NUL or lone surrogates, whatever
 * the operation. Chain `.min()`, `.max()`, `.regex()` and `.trim()` as with
 * `z.string()`.
 */
export function text(params?: Parameters<typeof z.string>[0]) {
  return z.string(params).check((ctx) => {
    const problem = textProblem(ctx.value);
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value, continue: false });
  });
}
