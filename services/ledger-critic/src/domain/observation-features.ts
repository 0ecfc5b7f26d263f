import type { CompletionEvidence } from '@vouch/contracts';
import { z } from 'zod';
import { stem } from './extract-features.js';
import { readText, type ReadText, type Word } from './read-text.js';
import type { Value } from './read-values.js';

/**
 * What the critic reads from an observation, extracted once when it is
 * recorded and stored with its evidence_recorded event, so that a review
 * (which may run many times over a growing ledger) never reads the same
 * summary again. Compact: one tuple per word.
 */

/** Bumped when extraction changes; features of another version are read again from the summary. */
export const FEATURES_VERSION = 1;

/** [lemma, part of speech, start, end, segment, negated (0/1), value?] */
export type StoredWord = [string, string, number, number, number, 0 | 1] | [string, string, number, number, number, 0 | 1, Value];

export interface ObservationFeatures {
  v: number;
  w: StoredWord[];
  /** Failure markers per segment (read-text.ts). */
  f: string[][];
  /** Index of the first word after the head (the text before the first colon). */
  h: number;
  /** Words of the tool's name, lemmatised. */
  t: string[];
  /** The keys the observation is found by (indexKeys), so a review only collects them. */
  k: string[];
}

export const ObservationFeaturesSchema = z.object({
  v: z.number().int(),
  w: z.array(z.array(z.any())),
  f: z.array(z.array(z.string())),
  h: z.number().int().nonnegative(),
  t: z.array(z.string()),
  k: z.array(z.string()),
});

export function extractObservationFeatures(summary: string, toolName: string | undefined): ObservationFeatures {
  const read = readText(summary);
  const features: Omit<ObservationFeatures, 'k'> = {
    v: FEATURES_VERSION,
    w: read.words.map((w) => (w.value ? [w.lemma, w.pos, w.start, w.end, w.seg, w.neg ? 1 : 0, w.value] : [w.lemma, w.pos, w.start, w.end, w.seg, w.neg ? 1 : 0])),
    f: read.failures,
    h: read.headEnd,
    t: toolName
      ? toolName
          .toLowerCase()
          .split(/[^a-z]+/)
          .filter((p) => p.length >= 2)
      : [],
  };
  return { ...features, k: indexKeys(features) };
}

/** The stored features back as words over their summary. */
export function observationReading(summary: string, features: ObservationFeatures): ReadText & { tool: string[] } {
  const words: Word[] = features.w.map(([lemma, pos, start, end, seg, neg, value]) => ({
    text: summary.slice(start, end),
    lemma,
    pos,
    start,
    end,
    seg,
    ...(neg ? { neg: true as const } : {}),
    ...(value ? { value } : {}),
  }));
  return { text: summary, words, failures: features.f, headEnd: features.h, tool: features.t };
}

/** The keys an observation is found by: stems of its words and tool, its identifiers, versions and quotes. */
export function indexKeys(features: Pick<ObservationFeatures, 'w' | 't'>): string[] {
  const keys = new Set<string>();
  for (const [lemma, pos, , , , , value] of features.w) {
    if (value) {
      if (value.k === 'id') keys.add(`i:${value.key}`);
      else if (value.k === 'quote') for (const part of value.text.split(/\s+/)) if (part.length >= 3) keys.add(`w:${stem(part)}`);
      continue;
    }
    if (lemma.length >= 2 && /^(NOUN|PROPN|ADJ|VERB|X|NUM|ADV)$/.test(pos)) keys.add(`w:${stem(lemma)}`);
  }
  for (const part of features.t) keys.add(`w:${stem(part)}`);
  return [...keys];
}

/** Features of each item: the stored ones where they are current, else read again from the summary (evidence recorded before they were stored). */
export function currentObservations(evidence: readonly CompletionEvidence[], stored: readonly ObservationFeatures[] | undefined): ObservationFeatures[] {
  return evidence.map((item, i) => {
    const features = stored?.[i];
    return features && features.v === FEATURES_VERSION ? features : extractObservationFeatures(item.summary, item.toolName);
  });
}
