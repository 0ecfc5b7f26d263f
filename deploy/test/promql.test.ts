// Every PromQL expression the deployment carries (alert and recording rules,
// Grafana panels and template variables, KEDA prometheus triggers) parsed with
// Prometheus's grammar, type-checked, and held to the metrics the services
// declare (promql-check.ts, declared-metrics.ts). Each check is also run on a
// copy with a mistake planted, and must refuse it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { declaredMetrics, metricsDeclaredIn, type MetricSpec } from './declared-metrics.js';
import { expandGrafanaVariables, grafanaVariablePromql, promqlProblems } from './promql-check.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const deploy = join(root, 'deploy');
const read = (...p: string[]) => readFileSync(join(...p), 'utf8');

interface Expression {
  where: string;
  expr: string;
}

/** Alert and recording rules of a rule file. */
function ruleExpressions(rules: Obj, file: string): Expression[] {
  return arr(rules.groups)
    .map(obj)
    .flatMap((g) => arr(g.rules).map(obj).map((r) => ({ where: `${file} ${String(g.name)}/${String(r.alert ?? r.record)}`, expr: String(r.expr ?? '') })));
}
/** The series recording rules write: any label may appear on them. */
function recordedSeries(rules: Obj): Map<string, MetricSpec> {
  const out = new Map<string, MetricSpec>();
  for (const r of arr(rules.groups).map(obj).flatMap((g) => arr(g.rules).map(obj))) {
    if (typeof r.record === 'string') out.set(r.record, { type: 'untyped', labels: null, from: `recording rule ${r.record}` });
  }
  return out;
}
/** Panel targets (rows' panels too) and template variable queries of a dashboard, Grafana's interval variables expanded. */
function dashboardExpressions(dashboard: Obj, file: string): Expression[] {
  const panels = (ps: unknown[]): Obj[] => ps.map(obj).flatMap((p) => [p, ...panels(arr(p.panels))]);
  const out: Expression[] = [];
  for (const p of panels(arr(dashboard.panels))) {
    for (const t of arr(p.targets).map(obj)) {
      if (obj(t.datasource).type !== undefined && obj(t.datasource).type !== 'prometheus') continue;
      out.push({ where: `${file} panel "${String(p.title)}" ${String(t.refId ?? '')}`, expr: expandGrafanaVariables(String(t.expr ?? '')) });
    }
  }
  for (const v of arr(obj(dashboard.templating).list).map(obj)) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : String(obj(v.query).query ?? '');
    const promql = grafanaVariablePromql(q);
    if (promql !== undefined) out.push({ where: `${file} variable ${String(v.name)}`, expr: expandGrafanaVariables(promql) });
  }
  return out;
}
/** The queries of KEDA prometheus triggers. */
function scaledObjectExpressions(docs: Obj[], file: string): Expression[] {
  return docs
    .filter((d) => d.kind === 'ScaledObject')
    .flatMap((so) => arr(obj(so.spec).triggers).map(obj).filter((t) => t.type === 'prometheus').map((t) => ({ where: `${file} ScaledObject/${String(obj(so.metadata).name)} trigger ${String(t.name ?? '')}`, expr: String(obj(t.metadata).query ?? '') })));
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(f) ? [p] : [];
  });

// What the deployment holds.
const prometheusConfig = parse(read(deploy, 'prometheus/prometheus.yml')) as Obj;
const ruleFiles = arr(prometheusConfig.rule_files).map(String);
const rules = ruleFiles.map((f) => ({ file: `prometheus/${f}`, doc: obj(parse(read(deploy, 'prometheus', f))) }));
const dashboards = readdirSync(join(deploy, 'grafana/dashboards'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ file: `grafana/dashboards/${f}`, doc: obj(JSON.parse(read(deploy, 'grafana/dashboards', f))) }));
const manifests = yamlFiles(join(deploy, 'k8s')).map((p) => ({ file: relative(deploy, p), docs: parseAllDocuments(readFileSync(p, 'utf8')).map((d) => obj(d.toJS())) }));

const declared = declaredMetrics();
const known = new Map<string, MetricSpec>([...declared.metrics, ...rules.flatMap((r) => [...recordedSeries(r.doc)])]);
const check = (list: Expression[], metrics: ReadonlyMap<string, MetricSpec> = known) => list.flatMap((e) => promqlProblems(e.expr, metrics, e.where));

describe('metrics the services declare', () => {
  it('are all read from the sources, with literal names and labels', () => {
    expect(declared.problems).toEqual([]);
    // The platform's, each service's, and prom-client's defaults.
    for (const name of ['vouch_jobs_processed_total', 'vouch_queue_jobs', 'vouch_http_requests_total', 'vouch_extractor_gpu_gate', 'vouch_ledger_critiques_total', 'vouch_vision_stages_total', 'vouch_board_leader', 'vouch_nodejs_eventloop_lag_seconds']) {
      expect(known.has(name), name).toBe(true);
    }
    expect([...(known.get('vouch_jobs_processed_total')?.labels ?? [])].sort()).toEqual(['outcome', 'queue']);
    expect(known.get('vouch_job_duration_seconds')?.type).toBe('histogram');
  });

  it('refuses a metric whose name the deploy tests cannot read', () => {
    const text = "import { Counter } from 'prom-client';\nconst kind = 'x';\nnew Counter({ name: `vouch_${kind}_total`, help: 'h', registers: [] });\nnew Gauge({ name: 'vouch_ok', help: 'h', labelNames: LABELS });\n";
    const found = metricsDeclaredIn(text, join(root, 'services/x/src/metrics.ts'));
    expect(found.problems.join('\n')).toMatch(/services\/x\/src\/metrics\.ts:3: a counter whose name is not a string literal/);
    expect(found.problems.join('\n')).toMatch(/vouch_ok's labelNames are not string literals/);
  });
});

describe('PromQL in the deployment', () => {
  it('finds the expressions: rule files, dashboards, their variables', () => {
    expect(rules.length).toBeGreaterThan(0);
    expect(rules.flatMap((r) => ruleExpressions(r.doc, r.file)).length).toBeGreaterThan(10);
    expect(dashboards.flatMap((d) => dashboardExpressions(d.doc, d.file)).some((e) => e.where.includes('variable'))).toBe(true);
  });

  it.each(rules.map((r) => [r.file, r] as const))('%s: every alert and recording rule parses, type-checks and uses declared metrics', (_file, r) => {
    expect(check(ruleExpressions(r.doc, r.file))).toEqual([]);
  });

  it.each(dashboards.map((d) => [d.file, d] as const))('%s: every panel query and template variable parses, type-checks and uses declared metrics', (_file, d) => {
    expect(check(dashboardExpressions(d.doc, d.file))).toEqual([]);
  });

  it('KEDA prometheus triggers parse, type-check and use declared metrics', () => {
    expect(check(manifests.flatMap((m) => scaledObjectExpressions(m.docs, m.file)))).toEqual([]);
  });
});

describe('planted mistakes are refused', () => {
  const alerts = rules.find((r) => r.file === 'prometheus/alerts.yml');
  if (!alerts) throw new Error('no prometheus/alerts.yml among the rule files');
  /** The rule file with its first alert's expression replaced. */
  const withFirstAlert = (expr: string): Obj => {
    const copy = structuredClone(alerts.doc);
    const first = arr(obj(arr(copy.groups)[0]).rules).map(obj).find((r) => r.alert);
    if (!first) throw new Error('no alert to plant into');
    first.expr = expr;
    return copy;
  };
  const ruleCases: [string, string, RegExp][] = [
    ['an unknown function', 'sum(rates(vouch_jobs_processed_total[5m])) > 0', /unknown function rates\(\)/],
    ['rate() without a range', 'sum(rate(vouch_jobs_processed_total)) > 0', /rate\(\) expects a range vector as argument 1, got an instant vector/],
    ['a misspelt metric', 'sum(rate(vouch_jobs_procesed_total[5m])) > 0', /unknown metric vouch_jobs_procesed_total/],
    ['a label the metric does not have', 'sum(rate(vouch_jobs_processed_total{outcom="failed"}[5m])) > 0', /vouch_jobs_processed_total has no label outcom/],
    ['an unclosed parenthesis', 'sum(rate(vouch_jobs_processed_total[5m]) > 0', /syntax error/],
    ['a range where an instant vector belongs', 'sum(vouch_queue_jobs[5m]) > 0', /sum expects an instant vector as argument 1, got a range vector/],
    ['rate() of a gauge', 'rate(vouch_queue_jobs[5m]) > 0', /rate\(\) over vouch_queue_jobs, a gauge/],
    ['histogram_quantile without its quantile', 'histogram_quantile(sum by (le) (rate(vouch_job_duration_seconds_bucket[5m])))', /histogram_quantile\(\) takes 2 argument\(s\), got 1/],
  ];
  it.each(ruleCases)('alert rule: %s', (_what, expr, problem) => {
    expect(check(ruleExpressions(alerts.doc, alerts.file))).toEqual([]);
    expect(check(ruleExpressions(withFirstAlert(expr), alerts.file)).join('\n')).toMatch(problem);
  });

  it('recording rule: a bad expression, and a recorded series that later rules may use', () => {
    const doc = { groups: [{ name: 'planted', rules: [{ record: 'vouch:jobs:rate5m', expr: 'sum by (queue) (irate(vouch_jobs_processed_total))' }, { alert: 'X', expr: 'vouch:jobs:rate5m{anything="x"} > 0' }] }] };
    const withRecorded = new Map([...known, ...recordedSeries(doc)]);
    const problems = check(ruleExpressions(doc, 'planted.yml'), withRecorded);
    expect(problems.join('\n')).toMatch(/planted\.yml planted\/vouch:jobs:rate5m: irate\(\) expects a range vector/);
    expect(problems.filter((p) => p.includes('planted/X'))).toEqual([]);
    expect(check(ruleExpressions(doc, 'planted.yml')).join('\n')).toMatch(/unknown metric vouch:jobs:rate5m/);
  });

  const overview = dashboards.find((d) => d.file.endsWith('vouch-overview.json'));
  if (!overview) throw new Error('no vouch-overview.json');
  /** The dashboard with a panel's first target replaced. */
  const withTarget = (expr: string): Obj => {
    const copy = structuredClone(overview.doc);
    const panel = arr(copy.panels).map(obj).find((p) => arr(p.targets).length > 0);
    obj(arr(panel?.targets)[0]).expr = expr;
    return copy;
  };
  it.each([
    ['rate() without a range', 'sum by (queue) (rate(vouch_jobs_processed_total))', /rate\(\) expects a range vector/],
    ['rate() whose range is a misspelt Grafana variable', 'sum by (queue) (rate(vouch_jobs_processed_total[$__rate_intreval]))', /syntax error/],
    ['an unknown metric', 'sum by (queue) (rate(vouch_jobs_total[$__rate_interval]))', /unknown metric vouch_jobs_total/],
    ['an unknown function', 'sum by (queue) (ratee(vouch_jobs_processed_total[$__rate_interval]))', /unknown function ratee\(\)/],
  ] as const)('dashboard panel: %s', (_what, expr, problem) => {
    expect(check(dashboardExpressions(overview.doc, overview.file))).toEqual([]);
    expect(check(dashboardExpressions(withTarget(expr), overview.file)).join('\n')).toMatch(problem);
  });

  it('dashboard variable: a selector of an unknown metric', () => {
    const copy = structuredClone(overview.doc);
    const variable = arr(obj(copy.templating).list).map(obj).find((v) => v.type === 'query');
    if (!variable) throw new Error('no query variable in vouch-overview.json');
    variable.query = { query: 'label_values(vouch_queue_job, queue)', refId: 'queue' };
    expect(check(dashboardExpressions(copy, overview.file)).join('\n')).toMatch(/variable queue: unknown metric vouch_queue_job/);
  });

  it('KEDA prometheus trigger: rate() without a range over a gauge', () => {
    const so = { apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', metadata: { name: 'planted' }, spec: { scaleTargetRef: { name: 'x' }, triggers: [{ type: 'prometheus', name: 'jobs', metadata: { serverAddress: 'http://prometheus:9090', query: 'sum(rate(vouch_queue_jobs{queue="extractor-gpu"}))', threshold: '1' } }] } };
    const problems = check(scaledObjectExpressions([so], 'planted.yaml')).join('\n');
    expect(problems).toMatch(/ScaledObject\/planted trigger jobs: rate\(\) expects a range vector/);
    expect(problems).toMatch(/rate\(\) over vouch_queue_jobs, a gauge/);
    expect(check(scaledObjectExpressions([structuredClone(so)].map((s) => ({ ...s, spec: { ...s.spec, triggers: [{ ...s.spec.triggers[0]!, metadata: { ...s.spec.triggers[0]!.metadata, query: 'sum(vouch_queue_jobs{queue="extractor-gpu", state=~"waiting|active"})' } }] } })), 'planted.yaml'))).toEqual([]);
  });

  it('reads every rule file prometheus.yml lists', () => {
    for (const f of ruleFiles) expect(existsSync(join(deploy, 'prometheus', f)), f).toBe(true);
  });
});
