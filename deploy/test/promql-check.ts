// PromQL checks without promtool or a Prometheus: each expression is parsed
// with Prometheus's own grammar (@prometheus-io/lezer-promql, the parser of
// the Prometheus UI), then type-checked the way the Prometheus engine does
// before it evaluates (functions and their argument types, aggregations,
// binary operators: `rate(x)` without a range is refused there, not by the
// grammar), and its metric names and label matchers are held to what the
// services declare (declared-metrics.ts).
import { parser } from '@prometheus-io/lezer-promql';
import type { MetricSpec } from './declared-metrics.js';

type ValueType = 'scalar' | 'vector' | 'matrix' | 'string';
type SyntaxNode = NonNullable<ReturnType<ReturnType<typeof parser.parse>['topNode']['getChild']>>;

/**
 * The functions of Prometheus 3 (promql/parser/functions.go): argument types,
 * how many of the last may be left out, whether the last repeats, and what they
 * return.
 */
const FUNCTIONS: Record<string, { args: ValueType[]; optional?: number; variadic?: boolean; returns: ValueType }> = {};
const fn = (names: string, args: ValueType[], returns: ValueType, more: { optional?: number; variadic?: boolean } = {}) => {
  for (const name of names.split(/\s+/).filter(Boolean)) FUNCTIONS[name] = { args, returns, ...more };
};
fn('abs acos acosh asin asinh atan atanh ceil cos cosh deg exp floor ln log10 log2 rad sgn sin sinh sqrt tan tanh', ['vector'], 'vector');
fn('absent sort sort_desc timestamp histogram_avg histogram_count histogram_sum histogram_stddev histogram_stdvar', ['vector'], 'vector');
fn(
  'absent_over_time avg_over_time changes count_over_time delta deriv first_over_time idelta increase irate last_over_time mad_over_time max_over_time min_over_time present_over_time rate resets stddev_over_time stdvar_over_time sum_over_time ts_of_first_over_time ts_of_last_over_time ts_of_max_over_time ts_of_min_over_time',
  ['matrix'],
  'vector',
);
fn('clamp', ['vector', 'scalar', 'scalar'], 'vector');
fn('clamp_max clamp_min', ['vector', 'scalar'], 'vector');
fn('day_of_month day_of_week day_of_year days_in_month hour minute month year', ['vector'], 'vector', { optional: 1 });
fn('double_exponential_smoothing', ['matrix', 'scalar', 'scalar'], 'vector');
fn('histogram_fraction', ['scalar', 'scalar', 'vector'], 'vector');
fn('histogram_quantile', ['scalar', 'vector'], 'vector');
fn('info', ['vector', 'vector'], 'vector', { optional: 1 });
fn('label_join', ['vector', 'string', 'string', 'string'], 'vector', { variadic: true });
fn('label_replace', ['vector', 'string', 'string', 'string', 'string'], 'vector');
fn('pi time', [], 'scalar');
fn('predict_linear', ['matrix', 'scalar'], 'vector');
fn('quantile_over_time', ['scalar', 'matrix'], 'vector');
fn('round', ['vector', 'scalar'], 'vector', { optional: 1 });
fn('scalar', ['vector'], 'scalar');
fn('sort_by_label sort_by_label_desc', ['vector', 'string'], 'vector', { variadic: true });
fn('vector', ['scalar'], 'vector');

/** Aggregations with a parameter, and its type. */
const AGGREGATION_PARAMETER: Record<string, ValueType> = { topk: 'scalar', bottomk: 'scalar', limitk: 'scalar', quantile: 'scalar', limit_ratio: 'scalar', count_values: 'string' };
const AGGREGATIONS = new Set(['sum', 'avg', 'count', 'min', 'max', 'group', 'stddev', 'stdvar', ...Object.keys(AGGREGATION_PARAMETER)]);
/** Words that may stand before a parenthesis without being a function. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'and', 'or', 'unless', 'atan2', 'start', 'end', 'step', 'range', 'min_of', 'max_of', 'fill', 'fill_left', 'fill_right']);

const EXPRESSIONS = new Set(['AggregateExpr', 'BinaryExpr', 'FunctionCall', 'MatrixSelector', 'NumberDurationLiteral', 'OffsetExpr', 'AnchoredExpr', 'SmoothedExpr', 'ParenExpr', 'StringLiteral', 'SubqueryExpr', 'UnaryExpr', 'VectorSelector', 'StepInvariantExpr']);
const SET_OPERATORS = new Set(['And', 'Or', 'Unless']);
const COMPARISONS = new Set(['Eql', 'Neq', 'Gtr', 'Lss', 'Gte', 'Lte']);
/** Functions that only make sense over counters (and histogram buckets, sums and counts). */
const COUNTER_FUNCTIONS = new Set(['rate', 'irate', 'increase', 'resets']);
/** Series Prometheus itself writes for every target and alert. */
const BUILT_IN = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped', 'scrape_samples_post_metric_relabeling', 'scrape_series_added', 'ALERTS', 'ALERTS_FOR_STATE']);
/** Labels every scraped series carries (scrape config and relabelling: prometheus-k8s.yml, prometheus.yml). */
export const TARGET_LABELS = new Set(['job', 'instance', 'service', 'namespace', 'pod', '__name__']);

const described = (t: ValueType) => (t === 'matrix' ? 'a range vector' : t === 'vector' ? 'an instant vector' : `a ${t}`);

const children = (node: SyntaxNode): SyntaxNode[] => {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
};
const expressionsIn = (node: SyntaxNode) => children(node).filter((c) => EXPRESSIONS.has(c.name));

/** Grafana's interval variables, as a duration the grammar reads. */
export function expandGrafanaVariables(expr: string): string {
  return expr.replace(/\$\{?__(?:rate_interval|interval|range)(?:_ms|_s)?\}?/g, '5m');
}

/** The series a selector names and its type of metric: histogram and summary series by their base metric. */
function resolveMetric(name: string, known: ReadonlyMap<string, MetricSpec>): { base: string; spec: MetricSpec; suffix: string } | undefined {
  const direct = known.get(name);
  if (direct) return { base: name, spec: direct, suffix: '' };
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const spec = m?.[1] ? known.get(m[1]) : undefined;
  if (m?.[1] && m[2] && spec && (spec.type === 'histogram' || (spec.type === 'summary' && m[2] !== 'bucket'))) return { base: m[1], spec, suffix: m[2] };
  return undefined;
}

/**
 * Every problem with one PromQL expression: a syntax error or an unknown
 * function, an argument of the wrong type (a range where an instant vector
 * belongs, or the reverse), an operator on the wrong types, a metric no
 * service declares, a label matcher on a label the metric does not have, and
 * rate()/increase() over a gauge. Empty when the expression is sound.
 */
export function promqlProblems(expression: string, known: ReadonlyMap<string, MetricSpec>, where = 'expr'): string[] {
  const expr = expression.trim();
  const problems: string[] = [];
  const say = (node: SyntaxNode | undefined, message: string) => problems.push(`${where}: ${message}${node ? ` (at "${expr.slice(node.from, node.to).slice(0, 60)}")` : ''}`);
  if (expr === '') return [`${where}: empty expression`];

  const tree = parser.parse(expr);
  let syntaxErrors = 0;
  tree.iterate({
    enter: (n) => {
      if (!n.type.isError) return;
      syntaxErrors++;
      const before = expr.slice(0, n.from);
      const call = /([A-Za-z_][A-Za-z0-9_:]*)\s*\($/.exec(before) ?? /^([A-Za-z_][A-Za-z0-9_:]*)\s*\(/.exec(expr.slice(n.from));
      const name = call?.[1];
      if (name && !FUNCTIONS[name] && !AGGREGATIONS.has(name) && !KEYWORDS.has(name.toLowerCase())) problems.push(`${where}: unknown function ${name}()`);
      else problems.push(`${where}: syntax error at column ${n.from + 1}: "${expr.slice(Math.max(0, n.from - 20), n.to + 20)}"`);
    },
  });
  if (syntaxErrors > 0) return [...new Set(problems)];

  const typeOf = (node: SyntaxNode): ValueType | undefined => {
    switch (node.name) {
      case 'PromQL':
      case 'ParenExpr': {
        const [inner] = expressionsIn(node);
        return inner ? typeOf(inner) : undefined;
      }
      case 'NumberDurationLiteral':
        return 'scalar';
      case 'StringLiteral':
        return 'string';
      case 'VectorSelector':
        checkSelector(node);
        return 'vector';
      case 'MatrixSelector': {
        const [selector] = expressionsIn(node);
        if (selector) typeOf(selector);
        return 'matrix';
      }
      case 'SubqueryExpr': {
        const [inner] = expressionsIn(node);
        const t = inner && typeOf(inner);
        if (t && t !== 'vector') say(node, `a subquery needs an instant vector, not ${described(t)}`);
        return 'matrix';
      }
      case 'OffsetExpr':
      case 'StepInvariantExpr':
      case 'AnchoredExpr':
      case 'SmoothedExpr': {
        const [inner] = expressionsIn(node);
        const t = inner && typeOf(inner);
        if (t && t !== 'vector' && t !== 'matrix') say(node, `offset and @ apply to selectors and subqueries, not to ${described(t)}`);
        return t;
      }
      case 'UnaryExpr': {
        const [inner] = expressionsIn(node);
        const t = inner && typeOf(inner);
        if (t && t !== 'scalar' && t !== 'vector') say(node, `unary - and + need a scalar or an instant vector, not ${described(t)}`);
        return t;
      }
      case 'FunctionCall':
        return checkCall(node);
      case 'AggregateExpr':
        return checkAggregation(node);
      case 'BinaryExpr':
        return checkBinary(node);
      default:
        say(node, `no rule for ${node.name}`);
        return undefined;
    }
  };

  const checkCall = (node: SyntaxNode): ValueType | undefined => {
    const name = expr.slice(node.getChild('FunctionIdentifier')?.from ?? node.from, node.getChild('FunctionIdentifier')?.to ?? node.from);
    const body = node.getChild('FunctionCallBody');
    const args = body ? expressionsIn(body) : [];
    const types = args.map(typeOf);
    const sig = FUNCTIONS[name];
    if (!sig) {
      say(node, `function ${name}() has no signature here: add it to FUNCTIONS in deploy/test/promql-check.ts`);
      return undefined;
    }
    const min = sig.args.length - (sig.optional ?? 0);
    if (args.length < min || (!sig.variadic && args.length > sig.args.length)) {
      say(node, `${name}() takes ${sig.variadic ? `at least ${min}` : min === sig.args.length ? min : `${min} to ${sig.args.length}`} argument(s), got ${args.length}`);
    }
    types.forEach((t, i) => {
      const want = sig.args[Math.min(i, sig.args.length - 1)];
      if (t && want && t !== want) {
        const hint = want === 'matrix' && t === 'vector' ? `: give it a range, e.g. ${name}(${expr.slice(args[i]!.from, args[i]!.to)}[5m])` : '';
        say(node, `${name}() expects ${described(want)} as argument ${i + 1}, got ${described(t)}${hint}`);
      }
    });
    if (COUNTER_FUNCTIONS.has(name)) {
      for (const sel of args.flatMap((a) => selectorsIn(a))) {
        const metric = metricOf(sel);
        const r = metric ? resolveMetric(metric, known) : undefined;
        if (r && r.spec.type === 'gauge') say(node, `${name}() over ${metric}, a gauge: it only makes sense over a counter`);
      }
    }
    return sig.returns;
  };

  const checkAggregation = (node: SyntaxNode): ValueType => {
    const op = expr.slice(node.getChild('AggregateOp')?.from ?? 0, node.getChild('AggregateOp')?.to ?? 0).toLowerCase();
    const body = node.getChild('FunctionCallBody');
    const args = body ? expressionsIn(body) : [];
    const param = AGGREGATION_PARAMETER[op];
    const want: ValueType[] = param ? [param, 'vector'] : ['vector'];
    if (args.length !== want.length) say(node, `${op} takes ${want.length} argument(s), got ${args.length}`);
    args.forEach((a, i) => {
      const t = typeOf(a);
      const w = want[i];
      if (t && w && t !== w) say(node, `${op} expects ${described(w)} as argument ${i + 1}, got ${described(t)}`);
    });
    return 'vector';
  };

  const checkBinary = (node: SyntaxNode): ValueType | undefined => {
    const [lhs, rhs] = expressionsIn(node);
    const op = children(node).find((c) => !EXPRESSIONS.has(c.name) && c.name !== 'BoolModifier' && c.name !== 'MatchingModifierClause' && c.name !== 'FillModifier');
    const l = lhs && typeOf(lhs);
    const r = rhs && typeOf(rhs);
    if (!l || !r || !op) return undefined;
    for (const t of [l, r]) if (t !== 'scalar' && t !== 'vector') say(node, `binary operator on ${described(t)}: operands are scalars or instant vectors`);
    if (SET_OPERATORS.has(op.name) && (l !== 'vector' || r !== 'vector')) say(node, `${op.name.toLowerCase()} works on instant vectors only`);
    if (COMPARISONS.has(op.name) && l === 'scalar' && r === 'scalar' && !node.getChild('BoolModifier')) say(node, 'comparing two scalars needs the bool modifier');
    return l === 'vector' || r === 'vector' ? 'vector' : 'scalar';
  };

  const selectorsIn = (node: SyntaxNode): SyntaxNode[] => {
    const out: SyntaxNode[] = [];
    const cursor = node.cursor();
    do if (cursor.name === 'VectorSelector') out.push(cursor.node);
    while (cursor.next() && cursor.from < node.to);
    return out;
  };
  const metricOf = (selector: SyntaxNode): string | undefined => {
    const id = selector.getChild('Identifier');
    if (id) return expr.slice(id.from, id.to);
    const nameMatcher = /__name__\s*=\s*"([^"]+)"/.exec(expr.slice(selector.from, selector.to));
    return nameMatcher?.[1];
  };

  const checkSelector = (node: SyntaxNode) => {
    const metric = metricOf(node);
    if (!metric) return;
    if (BUILT_IN.has(metric)) return;
    const resolved = resolveMetric(metric, known);
    if (!resolved) {
      say(node, `unknown metric ${metric}: no vouch process declares it`);
      return;
    }
    const labels = resolved.spec.labels;
    if (!labels) return;
    const matchers = node.getChild('LabelMatchers');
    for (const m of matchers ? children(matchers) : []) {
      const label = m.getChild('LabelName') ?? m.getChild('QuotedLabelName');
      if (!label) continue;
      const l = expr.slice(label.from, label.to).replace(/^"|"$/g, '');
      const extra = resolved.suffix === 'bucket' ? ['le'] : resolved.spec.type === 'summary' && resolved.suffix === '' ? ['quantile'] : [];
      if (!labels.has(l) && !TARGET_LABELS.has(l) && !extra.includes(l)) say(m, `${metric} has no label ${l} (it has ${[...labels, ...extra].join(', ') || 'none of its own'})`);
    }
  };

  typeOf(tree.topNode);
  return [...new Set(problems)];
}

/** The PromQL inside a Grafana template variable query (label_values(selector, label), query_result(expr)); undefined for the others. */
export function grafanaVariablePromql(query: string): string | undefined {
  const q = query.trim();
  const labelValues = /^label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$/s.exec(q);
  if (labelValues?.[1]) return labelValues[1];
  const result = /^query_result\((.*)\)$/s.exec(q);
  if (result?.[1]) return result[1];
  return undefined;
}
