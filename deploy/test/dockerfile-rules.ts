// What deploy/Dockerfile must do so that a runtime image holds one service's
// production dependencies and built files only, checked on its text (no
// Docker engine here). Returns the problems found; empty when it holds.

interface Stage {
  name: string;
  from: string;
  lines: string[];
}

/** The stages of a Dockerfile: continuation lines joined, comments dropped. */
export function dockerStages(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const line of text.replace(/\\\r?\n/g, ' ').split(/\r?\n/).map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from?.[1]) stages.push({ name: from[2] ?? String(stages.length), from: from[1], lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

export function runtimeImageProblems(text: string): string[] {
  const stages = dockerStages(text);
  const problems: string[] = [];
  const stage = (name: string) => stages.find((s) => s.name === name);
  /** A stage's instructions, following FROM <earlier stage> chains. */
  const allLines = (s: Stage | undefined): string[] => (s ? [...allLines(stages.find((x) => x.name === s.from && x !== s)), ...s.lines] : []);

  const prod = allLines(stage('prod-deps')).join('\n');
  if (!/npm ci --omit=dev --workspace "?services\/\$\{?SERVICE\}?"?/.test(prod)) problems.push('prod-deps does not install the production dependencies of services/$SERVICE alone (npm ci --omit=dev --workspace services/${SERVICE})');
  const files = allLines(stage('image-files'));
  if (!files.some((l) => /^COPY\s+deploy\/image-files\.mjs\s/.test(l)) || !/image-files\.mjs "?services\/\$\{?SERVICE\}?"?/.test(files.join('\n'))) {
    problems.push('no image-files stage listing what services/$SERVICE needs with deploy/image-files.mjs');
  }
  const runtime = stage('runtime');
  if (!runtime || stages.at(-1) !== runtime) problems.push('the last stage is not runtime');
  const copies = (runtime?.lines ?? []).filter((l) => /^(COPY|ADD)\b/.test(l));
  if (copies.length === 0) problems.push('runtime copies nothing');
  for (const c of copies) if (!/^COPY\s+--from=image-files\s+\/image\/?\s/.test(c)) problems.push(`runtime: ${c}: the image takes only the files image-files.mjs listed`);
  return problems;
}
