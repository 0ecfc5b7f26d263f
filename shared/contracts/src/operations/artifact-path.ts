/**
 * Workspace-relative artifact paths. The extractor never touches a file
 * system: a path is a name within the caller's workspace. It is still held to
 * file-system rules so that two spellings of one file are one artifact and a
 * path can never name something outside its workspace when a caller later
 * uses it on disk.
 */

/** Longest path accepted, in characters. */
export const ARTIFACT_PATH_MAX_CHARS = 1024;

// C0 and C1 control characters and DEL: invisible in logs and prompts, and never part of a sane file name.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why a path is refused, or undefined when it is acceptable. */
export function artifactPathProblem(raw: string): string | undefined {
  if (raw.length === 0) return 'path must not be empty: pass the file path relative to the workspace root, e.g. src/config/router.ts';
  if (raw.length > ARTIFACT_PATH_MAX_CHARS) return `path is at most ${ARTIFACT_PATH_MAX_CHARS} characters`;
  if (CONTROL.test(raw)) return 'path must not contain NUL or control characters';
  if (raw.includes('\\')) return 'path must use forward slashes (/), not backslashes';
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw) || raw.startsWith('~')) return 'path must be relative to the workspace root, not absolute: drop the leading / (or drive letter, or ~)';
  const segments = raw.split('/');
  if (segments.includes('..')) return 'path must not contain .. segments: name the file from the workspace root';
  if (segments.every((s) => s === '' || s === '.')) return 'path must name a file, not the workspace root';
  return undefined;
}

/**
 * The canonical spelling of an acceptable path: `./` segments and repeated or
 * trailing slashes removed. Throws on a path artifactPathProblem refuses.
 */
export function normalizeArtifactPath(raw: string): string {
  const problem = artifactPathProblem(raw);
  if (problem) throw new Error(problem);
  return raw
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}
