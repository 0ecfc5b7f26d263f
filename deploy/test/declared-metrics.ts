// The metrics vouch's processes expose, read from what declares them rather
// than from a list kept by hand:
//
//   - every `new Counter|Gauge|Histogram|Summary({ name, labelNames })` in the
//     sources of the services and the shared packages they run (shared/platform
//     and each service's metrics.ts, the gateway's budgets, ...), found with the
//     TypeScript parser;
//   - prom-client's default process metrics, as @vouch/platform registers them
//     (collectDefaultMetrics with the vouch_ prefix), read from a registry.
//
// A metric whose name is not a literal cannot be checked, so it is reported.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
export interface MetricSpec {
  type: MetricType;
  /** Label names the process sets; null when any may appear (a recorded series). */
  labels: ReadonlySet<string> | null;
  /** Where it is declared. */
  from: string;
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CONSTRUCTORS: Record<string, MetricType> = { Counter: 'counter', Gauge: 'gauge', Histogram: 'histogram', Summary: 'summary' };

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** The packages whose code runs in a service process: every service, and every shared package but the test helpers. */
function runtimeSources(): string[] {
  const packages = ['services', 'shared'].flatMap((ws) =>
    readdirSync(join(root, ws))
      .filter((d) => existsSync(join(root, ws, d, 'package.json')) && !(ws === 'shared' && d === 'testing'))
      .map((d) => join(root, ws, d, 'src')),
  );
  return packages.flatMap(sourceFiles);
}

const unwrap = (e: ts.Expression): ts.Expression => (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e) ? unwrap(e.expression) : e);

/** The metrics declared in TypeScript source text. */
export function metricsDeclaredIn(text: string, file: string): { metrics: Map<string, MetricSpec>; problems: string[] } {
  const metrics = new Map<string, MetricSpec>();
  const problems: string[] = [];
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const at = (n: ts.Node) => `${relative(root, file)}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && CONSTRUCTORS[node.expression.text]) {
      const type = CONSTRUCTORS[node.expression.text]!;
      const config = node.arguments?.[0] && unwrap(node.arguments[0]);
      if (!config || !ts.isObjectLiteralExpression(config)) {
        problems.push(`${at(node)}: new ${node.expression.text}(…) without an object literal: its name cannot be read`);
      } else {
        const prop = (name: string) => config.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === name);
        const nameInit = prop('name')?.initializer;
        const name = nameInit && (ts.isStringLiteral(nameInit) || ts.isNoSubstitutionTemplateLiteral(nameInit)) ? nameInit.text : undefined;
        const labelInit = prop('labelNames')?.initializer;
        const labelList = labelInit ? unwrap(labelInit) : undefined;
        const labels = labelList && ts.isArrayLiteralExpression(labelList) ? labelList.elements.map((e) => (ts.isStringLiteral(e) ? e.text : undefined)) : labelList ? [undefined] : [];
        if (!name) problems.push(`${at(node)}: a ${type} whose name is not a string literal: the deploy tests cannot check queries against it`);
        else if (labels.includes(undefined)) problems.push(`${at(node)}: ${name}'s labelNames are not string literals`);
        else metrics.set(name, { type, labels: new Set(labels as string[]), from: at(node) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { metrics, problems };
}

interface PromClient {
  Registry: new () => { getMetricsAsArray(): { name: string; type?: string; labelNames?: string[] }[]; clear(): void };
  collectDefaultMetrics(opts: { register: unknown; prefix: string }): void;
}

/** prom-client's default process metrics, named as @vouch/platform registers them. */
function defaultMetrics(): Map<string, MetricSpec> {
  const prom = createRequire(join(root, 'shared/platform/package.json'))('prom-client') as PromClient;
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry, prefix: 'vouch_' });
  const out = new Map<string, MetricSpec>();
  for (const m of registry.getMetricsAsArray()) {
    const type = (['counter', 'gauge', 'histogram', 'summary'].includes(String(m.type)) ? m.type : 'untyped') as MetricType;
    out.set(m.name, { type, labels: new Set(m.labelNames ?? []), from: 'prom-client collectDefaultMetrics' });
  }
  registry.clear();
  return out;
}

/** Every metric a vouch process declares, and the declarations that could not be read. */
export function declaredMetrics(): { metrics: Map<string, MetricSpec>; problems: string[] } {
  const metrics = defaultMetrics();
  const problems: string[] = [];
  for (const file of runtimeSources()) {
    const found = metricsDeclaredIn(readFileSync(file, 'utf8'), file);
    problems.push(...found.problems);
    for (const [name, spec] of found.metrics) {
      const before = metrics.get(name);
      if (before && (before.type !== spec.type || [...(before.labels ?? [])].sort().join() !== [...(spec.labels ?? [])].sort().join())) {
        problems.push(`${spec.from}: ${name} is declared again with other type or labels than at ${before.from}`);
      }
      metrics.set(name, spec);
    }
  }
  return { metrics, problems };
}
