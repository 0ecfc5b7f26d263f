import type { CompletionEvidence } from '@vouch/contracts';
import { stem } from './extract-features.js';
import { readText, type ReadText, type Word } from './read-text.js';
import type { Value } from './read-values.js';

/**
 * What the critic reads from an observation, extracted once when it is
 * recorded, so that a review (which may run many times over a growing ledger)
 * never reads the same summary again. Compact: one tuple per word.
 *
 * They are derived data, not part of the ledger: they are kept in their own
 * table (ledger_observations, one row per evidence item, written in the
 * transaction that records the item), out of the event stream, the snapshot
 * and the state reads return, which they made three times larger. A review
 * reads the index keys of the evidence it saw and the full features of only
 * the candidates it judges. Features depend on nothing but the item's summary,
 * its tool and FEATURES_VERSION, so a missing or stale row is rebuilt from
 * the summary to the same value.
 */

/** Bumped when extraction changes; features of another version are read again from the summary. */
export const FEATURES_VERSION = 2;

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

/**
 * The index key of a value, where it has one: an identifier; a number of at
 * least 10 in its base unit ("1,082" and "1082", "12,500 L" and "12.5 m³"
 * share it; smaller ones are too common to find anything by); a version.
 */
export function valueKey(value: Value): string | undefined {
  if (value.k === 'id') return `i:${value.key}`;
  if (value.k === 'num' && Math.abs(value.n) >= 10) return `n:${value.n}`;
  if (value.k === 'ver') return `v:${value.parts.join('.')}`;
  return undefined;
}

/** The keys an observation is found by: stems of its words and tool, its identifiers, versions and quotes. */
export function indexKeys(features: Pick<ObservationFeatures, 'w' | 't'>): string[] {
  const keys = new Set<string>();
  for (const [lemma, pos, , , , , value] of features.w) {
    if (value) {
      const key = valueKey(value);
      if (key) keys.add(key);
      else if (value.k === 'quote') for (const part of value.text.split(/\s+/)) if (part.length >= 3) keys.add(`w:${stem(part)}`);
      continue;
    }
    if (lemma.length >= 2 && /^(NOUN|PROPN|ADJ|VERB|X|NUM|ADV)$/.test(pos)) keys.add(`w:${stem(lemma)}`);
  }
  for (const part of features.t) keys.add(`w:${stem(part)}`);
  return [...keys];
}

/** The features of one evidence item, by its seq, as ledger_observations holds them. */
export interface StoredObservation {
  seq: number;
  features: ObservationFeatures;
}

/** Reads the items' features from their summaries: when they are recorded, and for items whose stored features are missing or stale. */
export function observeEvidence(items: ReadonlyArray<Pick<CompletionEvidence, 'seq' | 'summary' | 'toolName'>>): StoredObservation[] {
  return items.map((item) => ({ seq: item.seq, features: extractObservationFeatures(item.summary, item.toolName) }));
}

/** Features of each item, read in memory from the stored ones where they are current (FEATURES_VERSION), else from the summary. */
export function currentObservations(evidence: readonly CompletionEvidence[], stored?: ReadonlyArray<ObservationFeatures | undefined>): ObservationFeatures[] {
  return evidence.map((item, i) => {
    const features = stored?.[i];
    return features && features.v === FEATURES_VERSION ? features : extractObservationFeatures(item.summary, item.toolName);
  });
}

/**
 * The stored index keys of evidence seq 1 to `count` by position, where they
 * are current; `stale` lists the seqs whose features must be read again from
 * the summary (no row, or one another FEATURES_VERSION read).
 */
export function currentKeys(count: number, rows: ReadonlyArray<{ seq: number; v: number; k: string[] }>): { keys: Array<string[] | undefined>; stale: number[] } {
  const keys: Array<string[] | undefined> = new Array<string[] | undefined>(count).fill(undefined);
  for (const row of rows) if (row.v === FEATURES_VERSION && row.seq >= 1 && row.seq <= count) keys[row.seq - 1] = row.k;
  const stale: number[] = [];
  keys.forEach((k, i) => {
    if (!k) stale.push(i + 1);
  });
  return { keys, stale };
}

/** The features of the wanted evidence seqs: the stored ones where current, else read again from the item's summary. */
export function currentFeatures(evidence: readonly CompletionEvidence[], wanted: readonly number[], stored: readonly StoredObservation[]): StoredObservation[] {
  const bySeq = new Map(stored.filter((o) => o.features.v === FEATURES_VERSION).map((o) => [o.seq, o.features]));
  return wanted.map((seq) => {
    const item = evidence[seq - 1];
    if (!item || item.seq !== seq) throw new Error(`no evidence item at seq ${seq} to read features of`);
    return { seq, features: bySeq.get(seq) ?? extractObservationFeatures(item.summary, item.toolName) };
  });
}
