/** How to narrow a capped search: the same search always gets the same advice. */
export interface NarrowingAdvice {
  topFiles: Array<{ path: string; matches: number }>;
  pathPrefix: string | null;
  tighterPatterns: string[];
  instruction: string;
}

const TOP_FILES = 5;

function directoryOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash + 1);
}

function commonDirectory(paths: readonly string[]): string {
  if (paths.length === 0) return '';
  let prefix = directoryOf(paths[0]!);
  for (const p of paths.slice(1)) while (prefix && !p.startsWith(prefix)) prefix = directoryOf(prefix.slice(0, -1));
  return prefix;
}

/**
 * Advice for a partial grep. A cap (result, scan or line) is narrowed with a
 * path prefix, the files with most matches and tighter patterns; targets that
 * are partial or capped reads are named, with the way to search them whole.
 */
export function adviseNarrowing(input: {
  pattern: string;
  ignoreCase: boolean;
  pathPrefix: string | undefined;
  perPath: ReadonlyMap<string, number>;
  counts: { returned: number; counted: number; filesScanned: number; filesTotal: number; capBytes: number };
  /** Whether a cap cut the search short (false when only partial reads make it partial). */
  capped?: boolean;
  /** The targets read only in part: how many, and the first paths. */
  partialReads?: { total: number; paths: readonly string[] };
}): NarrowingAdvice {
  const capped = input.capped ?? true;
  const topFiles = [...input.perPath]
    .map(([path, matches]) => ({ path, matches }))
    .sort((a, b) => b.matches - a.matches || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .slice(0, TOP_FILES);
  const current = input.pathPrefix ?? '';
  let prefix: string | null = commonDirectory(topFiles.map((f) => f.path));
  if (!prefix || prefix.length <= current.length) prefix = topFiles[0] ? topFiles[0].path : null;
  if (prefix !== null && prefix.length <= current.length) prefix = null;

  const tighter: string[] = [];
  const wordLike = /^[A-Za-z0-9_]+$/.test(input.pattern);
  if (capped && wordLike) tighter.push(`\\b${input.pattern}\\b`);
  if (capped && !input.pattern.startsWith('^')) tighter.push(`^\\s*(?:${input.pattern})`);
  if (capped && wordLike) tighter.push(`${input.pattern}\\s*[:=]`);
  const c = input.counts;
  const sentences: string[] = [];
  if (capped) {
    const parts = [
      `capped: ${c.returned} of ${c.counted} matching lines returned (cap ${c.capBytes} bytes), from ${c.filesScanned} of ${c.filesTotal} files scanned; this is a partial result, not the absence of matches.`,
    ];
    if (prefix !== null) parts.push(`Narrow with pathPrefix "${prefix}"${topFiles[0] ? ` (${topFiles[0].path} has ${topFiles[0].matches} matches)` : ''}`);
    if (tighter.length) parts.push(`or a tighter pattern such as ${tighter.map((t) => JSON.stringify(t)).join(' or ')}`);
    if (input.ignoreCase) parts.push('or search case-sensitively');
    sentences.push(`${parts.join(' ')}.`);
  }
  const partial = input.partialReads;
  if (partial && partial.total > 0) {
    const named = partial.paths.slice(0, TOP_FILES).join(', ');
    const more = partial.total > Math.min(partial.paths.length, TOP_FILES) ? `, and ${partial.total - Math.min(partial.paths.length, TOP_FILES)} more (provenance.partialReads)` : '';
    sentences.push(
      `partial reads: ${partial.total} of the ${c.filesTotal} files searched ${partial.total === 1 ? 'was' : 'were'} recorded only from partial or capped reads (${named}${more}); a match may be in what was not read, so this is not the absence of matches. Read ${partial.total === 1 ? 'it' : 'them'} whole (artifact.read without range) and search again.`,
    );
  }
  return { topFiles, pathPrefix: capped ? prefix : null, tighterPatterns: tighter, instruction: sentences.join(' ') };
}
