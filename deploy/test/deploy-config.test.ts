// Checks of the deployment configuration. No Docker engine or Kubernetes cluster
// runs on the development and CI machines, so nothing here builds or starts
// anything: the files are parsed and held to the rules in docs/architecture.md.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { runtimeImageProblems } from './dockerfile-rules.js';

type Obj = Record<string, unknown>;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const deploy = join(root, 'deploy');
const read = (...p: string[]): string => readFileSync(join(...p), 'utf8');
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown, what = 'value'): Obj => {
  if (!isObj(v)) throw new Error(`${what} is not a mapping`);
  return v;
};
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const parseYaml = (text: string): Obj => obj(parse(text, { merge: true }), 'YAML document');

// ---------------------------------------------------------------------------
// What the deployment must match (docs/architecture.md and the services' configuration).

/** Every service is a directory under services/ with a package.json. */
const services: string[] = readdirSync(join(root, 'services'))
  .filter((d) => existsSync(join(root, 'services', d, 'package.json')))
  .sort();

/** Port serving /metrics, /livez, /readyz: gateway's PORT, every other service's HTTP_PORT. */
const PORTS: Record<string, number> = {
  gateway: 8080,
  'vision-router': 9101,
  extractor: 9102,
  'board-dispatcher': 9103,
  'ledger-critic': 9104,
};
const portEnv = (svc: string): string => (svc === 'gateway' ? 'PORT' : 'HTTP_PORT');
const portOf = (svc: string): number => {
  const p = PORTS[svc];
  if (p === undefined) throw new Error(`service ${svc} has no documented port: add it to PORTS in this test`);
  return p;
};
const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized', 'waiting-children', 'paused'];
/** The documented vouch_ metrics and their labels (null: free-form values). */
const DOCUMENTED: Record<string, Record<string, string[] | null>> = {
  vouch_jobs_processed_total: { queue: null, outcome: ['completed', 'failed'] },
  vouch_job_duration_seconds: { queue: null },
  vouch_job_wait_seconds: { queue: null },
  vouch_jobs_deferred_total: { queue: null },
  vouch_queue_jobs: { queue: null, state: QUEUE_STATES },
  vouch_http_requests_total: { method: null, route: null, status: null },
  vouch_http_request_duration_seconds: { method: null, route: null },
  vouch_ledger_critiques_total: { decision: null },
  vouch_ledger_terminal_status_total: { status: null },
  vouch_ledger_critique_duration_seconds: {},
  vouch_ledger_claims_total: { status: null },
  vouch_ledger_llm_critic_calls_total: { outcome: null },
  vouch_extractor_reads_total: { fidelity: null, outcome: ['new', 'repeat', 'reread', 'gone'] },
  vouch_extractor_rereads_total: { reason: null },
  vouch_extractor_materializations_total: { decision: ['full_body', 'branch_extract', 'over_budget', 'reread_required'], reason: null },
  vouch_extractor_materialized_chars: { decision: null },
  vouch_extractor_greps_total: { status: ['complete', 'partial'] },
  vouch_extractor_grep_scanned_bytes_total: {},
  vouch_extractor_extracts_total: { kind: ['deterministic', 'llm'], coverage: ['complete', 'incomplete'] },
  vouch_extractor_requirements_total: { kind: ['deterministic', 'llm'], status: ['satisfied', 'unresolved'] },
  vouch_extractor_prompt_chars: {},
  vouch_extractor_evidence_chars: { kind: null },
  vouch_extractor_gpu_gate: { state: ['off', 'pending', 'passed', 'failed'] },
  vouch_extractor_gpu_gate_checks_total: { outcome: ['passed', 'failed'], stage: null },
  vouch_vision_stages_total: { kind: ['observation', 'ocr', 'auxiliary_vision'], status: ['ran', 'skipped', 'unresolved'] },
  vouch_vision_escalations_total: { kind: ['observation', 'ocr', 'auxiliary_vision'] },
  vouch_vision_stage_duration_seconds: { kind: ['observation', 'ocr', 'auxiliary_vision'] },
  vouch_vision_cache_lookups_total: { result: ['hit', 'miss'] },
  vouch_vision_ocr_confidence: {},
  vouch_vision_auxiliary_calls_total: { outcome: ['ok', 'not_configured', 'no_vision', 'not_found', 'timeout', 'error', 'empty'] },
  vouch_vision_ocr_worker_events_total: { event: ['started', 'recycled', 'failed', 'timed_out'] },
  vouch_vision_resolutions_total: { resolved_by: ['reply_to', 'alias', 'latest', 'inline', 'choose_image', 'none'] },
  vouch_board_leader: {},
  vouch_board_lease_takeovers_total: {},
  vouch_board_fence_rejections_total: {},
  vouch_board_dispatch_latency_seconds: {},
  vouch_board_dispatched_total: {},
  vouch_board_cards: { status: ['todo', 'ready', 'dispatched', 'running', 'submitted', 'changes_requested', 'verified', 'blocked', 'cancelled'] },
  vouch_board_diagnostics: { kind: null },
  vouch_board_lease_ttl_seconds: {},
  vouch_board_leaderless_seconds: {},
  vouch_tenant_cost_units_total: { tenant: null },
  vouch_tenant_budget_refusals_total: { tenant: null, limit: ['rate', 'concurrency'] },
  vouch_tenant_queue_wait_seconds: { queue: null, tenant: null },
  vouch_gateway_budget_checks_skipped_total: {},
};
const HISTOGRAMS = new Set(['vouch_job_duration_seconds', 'vouch_job_wait_seconds', 'vouch_http_request_duration_seconds', 'vouch_ledger_critique_duration_seconds', 'vouch_extractor_materialized_chars', 'vouch_extractor_prompt_chars', 'vouch_extractor_evidence_chars', 'vouch_vision_stage_duration_seconds', 'vouch_vision_ocr_confidence', 'vouch_board_dispatch_latency_seconds', 'vouch_tenant_queue_wait_seconds']);
/** Labels Prometheus attaches to every scraped series (scrape config and relabelling). */
const TARGET_LABELS = ['job', 'instance', 'service', 'namespace', 'pod'];

interface PromClient {
  Registry: new () => { getMetricsAsArray(): { name: string }[]; clear(): void };
  collectDefaultMetrics(opts: { register: unknown; prefix: string }): void;
}
/** Default process metrics, as prom-client (the one @vouch/platform uses) names them with the vouch_ prefix. */
function defaultProcessMetrics(): Map<string, Record<string, string[] | null>> {
  const requireFromPlatform = createRequire(join(root, 'shared/platform/package.json'));
  const prom = requireFromPlatform('prom-client') as PromClient;
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry, prefix: 'vouch_' });
  const names = registry.getMetricsAsArray().map((m) => m.name);
  registry.clear();
  // Default metrics carry a few labels of their own (gc kind, heap space, version).
  return new Map(names.map((n) => [n, { kind: null, space: null, type: null, version: null, major: null, minor: null, patch: null }]));
}
const KNOWN_METRICS = new Map<string, Record<string, string[] | null>>([...Object.entries(DOCUMENTED), ...defaultProcessMetrics()]);

// ---------------------------------------------------------------------------
// PromQL helpers (text level: the names, selectors and grouping labels used).

const METRIC_RE = /\bvouch_[a-zA-Z0-9_:]+/g;
function metricBase(name: string): string {
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  return m?.[1] && HISTOGRAMS.has(m[1]) ? m[1] : name;
}
function metricNames(expr: string): string[] {
  return [...expr.matchAll(METRIC_RE)].map((m) => metricBase(m[0]));
}
function checkPromql(expr: string, where: string): string[] {
  const problems: string[] = [];
  const depth = { '(': 0, '{': 0, '[': 0 };
  const close: Record<string, keyof typeof depth> = { ')': '(', '}': '{', ']': '[' };
  for (const ch of expr.replace(/"[^"]*"/g, '""')) {
    if (ch in depth) depth[ch as keyof typeof depth]++;
    const open = close[ch];
    if (open && --depth[open] < 0) problems.push(`${where}: unbalanced '${ch}' in ${expr}`);
  }
  for (const [k, v] of Object.entries(depth)) if (v !== 0) problems.push(`${where}: unclosed '${k}' in ${expr}`);

  const used = metricNames(expr);
  for (const name of used) if (!KNOWN_METRICS.has(name)) problems.push(`${where}: undocumented metric ${name}`);
  for (const m of expr.matchAll(/\b(?:vouch_[a-zA-Z0-9_:]+|up)\s*\{([^}]*)\}/g)) {
    const name = metricBase(m[0].slice(0, m[0].indexOf('{')).trim());
    const labels = name === 'up' ? {} : KNOWN_METRICS.get(name);
    if (!labels) continue;
    for (const [, label, op, value] of (m[1] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
      if (!label || TARGET_LABELS.includes(label) || label === 'le') continue;
      if (!(label in labels)) {
        problems.push(`${where}: ${name} has no label ${label}`);
        continue;
      }
      const allowed = labels[label];
      if (allowed && op === '=' && value !== undefined && !value.includes('$') && !allowed.includes(value)) {
        problems.push(`${where}: ${name}{${label}="${value}"}: not one of ${allowed.join('|')}`);
      }
    }
  }
  const labelsInExpr = new Set<string>([...TARGET_LABELS, 'le']);
  for (const name of used) for (const l of Object.keys(KNOWN_METRICS.get(name) ?? {})) labelsInExpr.add(l);
  for (const m of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
    for (const l of (m[1] ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!labelsInExpr.has(l)) problems.push(`${where}: grouping by ${l}, which no metric in the expression has`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------
// Kubernetes helpers.

interface Kustomization {
  dir: string;
  doc: Obj;
}
function loadKustomization(dir: string): Kustomization {
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!file) throw new Error(`${dir} has no kustomization.yaml`);
  return { dir, doc: parseYaml(readFileSync(file, 'utf8')) };
}
/** Every manifest a kustomization pulls in through resources (recursively). */
function k8sResources(dir: string): Obj[] {
  const { doc } = loadKustomization(dir);
  const out: Obj[] = [];
  for (const r of arr(doc.resources)) {
    const p = join(dir, String(r));
    if (!existsSync(p)) continue; // reported by the resource-list test
    if (statSync(p).isDirectory()) out.push(...k8sResources(p));
    else for (const d of parseAllDocuments(readFileSync(p, 'utf8'))) if (isObj(d.toJS())) out.push(d.toJS() as Obj);
  }
  return out;
}
const named = (docs: Obj[], kind: string, name: string): Obj | undefined =>
  docs.find((d) => d.kind === kind && obj(d.metadata).name === name);
const podSpec = (workload: Obj): Obj => obj(obj(obj(workload.spec).template).spec);
const containers = (workload: Obj): Obj[] => arr(podSpec(workload).containers).map((c) => obj(c));
const envOf = (container: Obj): Obj[] => arr(container.env).map((e) => obj(e));

const k8sBase = join(deploy, 'k8s/base');
const k8sDocs = k8sResources(k8sBase);
const configMapValue = (name: string, key: string): string | undefined => {
  const cm = named(k8sDocs, 'ConfigMap', name);
  const v = cm ? obj(cm.data ?? {})[key] : undefined;
  return v === undefined ? undefined : String(v);
};

/** The SHUTDOWN_GRACE_MS a container ends up with: its own env, then envFrom config maps, then the default. */
function shutdownGraceMs(container: Obj): number {
  const own = envOf(container).find((e) => e.name === 'SHUTDOWN_GRACE_MS');
  if (own?.value !== undefined) return Number(own.value);
  for (const src of arr(container.envFrom).map((e) => obj(e))) {
    const ref = src.configMapRef ? obj(src.configMapRef) : undefined;
    const v = ref ? configMapValue(String(ref.name), 'SHUTDOWN_GRACE_MS') : undefined;
    if (v !== undefined) return Number(v);
  }
  return DEFAULT_SHUTDOWN_GRACE_MS;
}

// ---------------------------------------------------------------------------
// Compose.

const compose = parseYaml(read(root, 'docker-compose.yml'));
const composeServices = obj(compose.services, 'compose services');
const durationSeconds = (d: unknown): number => {
  const m = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(String(d ?? ''));
  if (!m || (!m[1] && !m[2])) return Number.NaN;
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0);
};
const composeEnv = (svc: Obj): Record<string, string> => {
  const env = svc.environment;
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((e) => String(e).split(/=(.*)/s).slice(0, 2) as [string, string]));
  }
  return Object.fromEntries(Object.entries(obj(env ?? {})).map(([k, v]) => [k, String(v)]));
};

// ---------------------------------------------------------------------------

describe('services under test', () => {
  it('are the workspace packages under services/', () => {
    expect(services.length).toBeGreaterThan(0);
    for (const svc of services) {
      const pkg = JSON.parse(read(root, 'services', svc, 'package.json')) as { name?: string };
      expect(pkg.name, `services/${svc}/package.json name`).toBe(`@vouch/${svc}`);
      portOf(svc);
    }
  });
});

describe('Dockerfile', () => {
  const text = read(deploy, 'Dockerfile');
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const globalArgs = new Map<string, string>();
  const stages: { name: string; from: string; lines: string[] }[] = [];
  for (const l of lines) {
    const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(l);
    if (from?.[1]) {
      const image = from[1].replace(/\$\{?(\w+)\}?/g, (_, a: string) => globalArgs.get(a) ?? `$${a}`);
      stages.push({ name: from[2] ?? String(stages.length), from: image, lines: [] });
    } else if (stages.length === 0) {
      const arg = /^ARG\s+(\w+)=(\S+)/i.exec(l);
      if (arg?.[1] && arg[2]) globalArgs.set(arg[1], arg[2].replace(/^"|"$/g, ''));
    } else {
      stages.at(-1)?.lines.push(l);
    }
  }
  const stage = (name: string) => {
    const s = stages.find((x) => x.name === name);
    if (!s) throw new Error(`Dockerfile has no stage ${name}`);
    return s;
  };
  /** A stage's instructions, following FROM <earlier stage> chains. */
  const allLines = (name: string): string[] => {
    const s = stage(name);
    const parent = stages.find((x) => x.name === s.from);
    return [...(parent ? allLines(parent.name) : []), ...s.lines];
  };
  const baseImage = (name: string): string => {
    const s = stage(name);
    return stages.some((x) => x.name === s.from) ? baseImage(s.from) : s.from;
  };

  it('has deps, build and runtime stages on node:24-bookworm-slim (Node 24 LTS, as the project pins)', () => {
    const names = stages.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['deps', 'build', 'runtime']));
    expect(names.at(-1), 'the last stage is the runtime image').toBe('runtime');
    for (const s of stages) expect(baseImage(s.name), `stage ${s.name}`).toBe('node:24-bookworm-slim');
  });

  it('installs from the lockfile and every workspace package.json before copying sources', () => {
    const deps = allLines('deps');
    const ci = deps.findIndex((l) => /^RUN\b.*\bnpm ci\b/.test(l) && !l.includes('--omit=dev'));
    expect(ci, 'deps runs npm ci').toBeGreaterThanOrEqual(0);
    expect(deps.slice(0, ci).some((l) => /^COPY\s+\.\s/.test(l)), 'no COPY . before npm ci in deps').toBe(false);
    const before = deps.slice(0, ci).join('\n');
    // The manifests come either straight from the context or from a stage that collects them.
    const manifestSource = /COPY\s+--from=(\S+)/.exec(before)?.[1];
    const manifestText = manifestSource ? allLines(manifestSource).join('\n') : before;
    expect(manifestText).toContain('package-lock.json');
    expect(manifestText).toMatch(/package\.json/);
    if (!manifestSource) {
      for (const ws of ['shared', 'services']) {
        for (const d of readdirSync(join(root, ws)).filter((x) => existsSync(join(root, ws, x, 'package.json')))) {
          expect(before, `${ws}/${d}/package.json copied`).toContain(`${ws}/${d}/package.json`);
        }
      }
    }
  });

  it('builds with turbo and ships production dependencies only', () => {
    expect(allLines('build').join('\n')).toMatch(/turbo run build/);
    expect(text).toMatch(/npm ci --omit=dev|npm prune --omit=dev/);
  });

  it("gives the runtime image only the service's own production dependencies and built files (image-files.mjs)", () => {
    expect(runtimeImageProblems(text)).toEqual([]);
    expect(existsSync(join(deploy, 'image-files.mjs'))).toBe(true);
    const ignored = read(root, '.dockerignore').split(/\r?\n/).map((l) => l.trim());
    expect(ignored.filter((l) => l === 'deploy' || l === 'deploy/' || l === 'deploy/image-files.mjs'), '.dockerignore keeps image-files.mjs in the context').toEqual([]);
    // The image of before: every service's dependencies, and shared/ with its sources and tests.
    const everything = text.replace(/^COPY --from=image-files \/image\/ \.\/$/m, 'COPY --from=prod-deps /app/ ./\nCOPY --from=build /out/shared/ ./shared/').replace(/ --workspace "services\/\$\{SERVICE\}"/, '');
    expect(everything).not.toBe(text);
    expect(runtimeImageProblems(everything)).toEqual([
      'prod-deps does not install the production dependencies of services/$SERVICE alone (npm ci --omit=dev --workspace services/${SERVICE})',
      'runtime: COPY --from=prod-deps /app/ ./: the image takes only the files image-files.mjs listed',
      'runtime: COPY --from=build /out/shared/ ./shared/: the image takes only the files image-files.mjs listed',
    ]);
  });

  it('selects the service with ARG SERVICE and runs it as the node user', () => {
    const runtime = stage('runtime').lines;
    expect(runtime).toContainEqual(expect.stringMatching(/^ARG\s+SERVICE\b/));
    expect(runtime).toContainEqual(expect.stringMatching(/^ENV\b.*NODE_ENV=production/));
    expect(runtime).toContainEqual(expect.stringMatching(/^USER\s+node\b/));
    const cmd = runtime.filter((l) => /^(CMD|ENTRYPOINT)\b/.test(l)).join(' ');
    expect(cmd).toMatch(/services\/\$\{?SERVICE\}?\/dist\/main\.js/);
    const userAt = runtime.findIndex((l) => /^USER\s/.test(l));
    expect(runtime.slice(userAt).some((l) => /^(RUN|COPY)\b/.test(l)), 'nothing installed after USER node').toBe(false);
  });

  it('.dockerignore keeps build outputs and local state out of the context', () => {
    const entries = read(root, '.dockerignore')
      .split(/\r?\n/)
      .map((l) => l.trim().replace(/^\*\*\//, '').replace(/\/$/, ''))
      .filter((l) => l && !l.startsWith('#'));
    for (const e of ['node_modules', 'dist', '.git', '.turbo', '.run']) expect(entries, e).toContain(e);
  });
});

describe('docker-compose.yml', () => {
  it('runs Redis 7 for queues: noeviction, AOF on, data on a volume', () => {
    const redis = obj(composeServices.redis, 'compose redis');
    expect(String(redis.image)).toMatch(/^redis:7(\b|$)/);
    const cmd = (Array.isArray(redis.command) ? redis.command.map(String) : String(redis.command).split(/\s+/)).join(' ');
    expect(cmd).toMatch(/--maxmemory-policy\s+noeviction\b/);
    expect(cmd).toMatch(/--appendonly\s+yes\b/);
    expect(arr(redis.volumes).map(String)).toContainEqual(expect.stringMatching(/:\/data$/));
    expect(redis.healthcheck).toBeDefined();
  });

  it('runs Postgres 15+ with a healthcheck', () => {
    const pg = obj(composeServices.postgres, 'compose postgres');
    const major = Number(/^postgres:(\d+)/.exec(String(pg.image))?.[1]);
    expect(major).toBeGreaterThanOrEqual(15);
    expect(pg.healthcheck).toBeDefined();
    const env = composeEnv(pg);
    expect(env.POSTGRES_PASSWORD ?? env.POSTGRES_HOST_AUTH_METHOD).toBeTruthy();
  });

  it.each(services)('builds and runs %s from deploy/Dockerfile', (svc) => {
    const s = obj(composeServices[svc], `compose service ${svc}`);
    const build = obj(s.build, `${svc}.build`);
    expect(build.context).toBe('.');
    expect(build.dockerfile).toBe('deploy/Dockerfile');
    expect(obj(build.args, `${svc}.build.args`).SERVICE).toBe(svc);

    const dependsOn = obj(s.depends_on, `${svc}.depends_on`);
    for (const dep of ['redis', 'postgres']) expect(obj(dependsOn[dep], dep).condition).toBe('service_healthy');

    const env = composeEnv(s);
    expect(env.REDIS_URL).toMatch(/^redis:\/\/redis:6379/);
    expect(env.DATABASE_URL).toMatch(/^postgres(ql)?:\/\/.*@postgres:5432\//);
    expect(Number(env[portEnv(svc)] ?? portOf(svc))).toBe(portOf(svc));
    const graceMs = Number(env.SHUTDOWN_GRACE_MS ?? DEFAULT_SHUTDOWN_GRACE_MS);
    expect(durationSeconds(s.stop_grace_period), `${svc} stop_grace_period`).toBeGreaterThan(graceMs / 1000);
  });

  it('builds no service that does not exist', () => {
    for (const [name, s] of Object.entries(composeServices)) {
      if (!isObj(s) || !s.build) continue;
      expect(services, `compose service ${name}`).toContain(String(obj(obj(s.build).args).SERVICE));
    }
  });

  it('mounts the Prometheus config, its rule files and the Grafana provisioning that exist', () => {
    const mounts = (svc: string) =>
      arr(obj(composeServices[svc], svc).volumes)
        .map(String)
        .filter((v) => v.startsWith('./'))
        .map((v) => {
          const [src = '', dst = ''] = v.split(':');
          return { src: join(root, src), dst };
        });
    for (const m of [...mounts('prometheus'), ...mounts('grafana')]) expect(existsSync(m.src), m.src).toBe(true);

    const prom = mounts('prometheus');
    const config = prom.find((m) => m.dst === '/etc/prometheus/prometheus.yml');
    expect(config, 'prometheus.yml mounted').toBeDefined();
    const rules = arr(parseYaml(readFileSync(config?.src ?? '', 'utf8')).rule_files).map(String);
    expect(rules.length).toBeGreaterThan(0);
    for (const r of rules) expect(prom.map((m) => m.dst), `rule file ${r}`).toContain(join('/etc/prometheus', r));

    const graf = mounts('grafana');
    const provider = parseYaml(read(deploy, 'grafana/provisioning/dashboards/vouch.yml'));
    const path = String(obj(obj(arr(provider.providers)[0]).options).path);
    expect(graf).toContainEqual({ src: join(deploy, 'grafana/dashboards'), dst: path });
    expect(graf).toContainEqual({ src: join(deploy, 'grafana/provisioning'), dst: '/etc/grafana/provisioning' });
  });
});

describe('kubernetes', () => {
  it.each([['base', k8sBase], ['overlays/gpu', join(deploy, 'k8s/overlays/gpu')]])(
    '%s: kustomization lists only resources and patches that exist',
    (_name, dir) => {
      const { doc } = loadKustomization(dir);
      expect(arr(doc.resources).length).toBeGreaterThan(0);
      for (const r of arr(doc.resources)) {
        const p = join(dir, String(r));
        expect(existsSync(p), `resource ${String(r)}`).toBe(true);
        if (statSync(p).isDirectory()) loadKustomization(p);
      }
      for (const p of arr(doc.patches)) {
        const path = obj(p).path;
        if (path !== undefined) expect(existsSync(join(dir, String(path))), `patch ${String(path)}`).toBe(true);
      }
      for (const key of ['patchesStrategicMerge', 'patchesJson6902', 'commonLabels', 'bases']) {
        expect(doc[key], `deprecated field ${key}`).toBeUndefined();
      }
    },
  );

  it('the GPU overlay builds on the base', () => {
    const { doc } = loadKustomization(join(deploy, 'k8s/overlays/gpu'));
    expect(arr(doc.resources)).toContain('../../base');
    expect(existsSync(join(deploy, 'k8s/overlays/gpu/README.md'))).toBe(true);
  });

  it('runs Redis as a StatefulSet with a PVC, noeviction and AOF on', () => {
    const sts = k8sDocs.find((d) => d.kind === 'StatefulSet' && containers(d).some((c) => String(c.image).startsWith('redis:7')));
    if (!sts) throw new Error('no Redis StatefulSet in the base');
    expect(arr(obj(sts.spec).volumeClaimTemplates).length).toBeGreaterThan(0);
    const redis = containers(sts).find((c) => String(c.image).startsWith('redis:'));
    if (!redis) throw new Error('no redis container');
    const args = [...arr(redis.command), ...arr(redis.args)].map(String).join(' ');
    const directives = new Map<string, string>();
    for (const m of args.matchAll(/--([a-z-]+)\s+(\S+)/g)) if (m[1] && m[2]) directives.set(m[1], m[2]);
    // A config file given as argument: read it from the ConfigMap mounted at its folder.
    const confPath = arr(redis.args).map(String).find((a) => a.endsWith('.conf'));
    if (confPath) {
      const mount = arr(redis.volumeMounts).map((m) => obj(m)).find((m) => confPath.startsWith(`${String(m.mountPath)}/`));
      const volume = arr(podSpec(sts).volumes).map((v) => obj(v)).find((v) => v.name === mount?.name);
      const cmName = volume?.configMap ? String(obj(volume.configMap).name) : '';
      const conf = configMapValue(cmName, basename(confPath));
      expect(conf, `${confPath} from ConfigMap ${cmName}`).toBeDefined();
      for (const line of (conf ?? '').split('\n')) {
        const m = /^\s*([a-z-]+)\s+(\S+)/.exec(line);
        if (m?.[1] && m[2]) directives.set(m[1], m[2]);
      }
    }
    expect(directives.get('maxmemory-policy')).toBe('noeviction');
    expect(directives.get('appendonly')).toBe('yes');
    const dataMount = arr(redis.volumeMounts).map((m) => obj(m)).find((m) => m.mountPath === (directives.get('dir') ?? '/data'));
    const claims = arr(obj(sts.spec).volumeClaimTemplates).map((t) => obj(obj(t).metadata).name);
    expect(claims, 'Redis data directory is on the PVC').toContain(dataMount?.name);
  });

  it('commits no Secret', () => {
    expect(k8sDocs.filter((d) => d.kind === 'Secret')).toEqual([]);
  });

  it.each(services)('has a Deployment and a Service for %s', (svc) => {
    const dep = named(k8sDocs, 'Deployment', svc);
    if (!dep) throw new Error(`no Deployment ${svc} in deploy/k8s/base`);
    const [c] = containers(dep);
    expect(String(c?.image).split(':')[0]).toBe(`vouch/${svc}`);
    const images = arr(loadKustomization(k8sBase).doc.images).map((i) => obj(i).name);
    expect(images, 'kustomization images entry').toContain(`vouch/${svc}`);
    const ports = arr(c?.ports).map((p) => obj(p));
    expect(ports.map((p) => p.containerPort)).toContain(portOf(svc));
    const env = envOf(c ?? {});
    expect(env.find((e) => e.name === portEnv(svc))?.value).toBe(String(portOf(svc)));

    const service = named(k8sDocs, 'Service', svc);
    if (!service) throw new Error(`no Service ${svc}`);
    const podLabels = obj(obj(obj(dep.spec).template).metadata).labels;
    expect(podLabels).toMatchObject(obj(obj(service.spec).selector));
    const targets = arr(obj(service.spec).ports).map((p) => obj(p).targetPort);
    const portNames = ports.map((p) => p.name);
    expect(targets.some((t) => t === portOf(svc) || portNames.includes(t))).toBe(true);
  });

  it('builds no Deployment for a service that does not exist', () => {
    for (const d of k8sDocs.filter((x) => x.kind === 'Deployment')) {
      for (const c of containers(d)) {
        const m = /^vouch\/([^:]+)/.exec(String(c.image));
        if (m?.[1]) expect(services, `image ${String(c.image)}`).toContain(m[1]);
      }
    }
  });

  const deployments = k8sDocs.filter((d) => d.kind === 'Deployment');
  it.each(deployments.map((d) => [String(obj(d.metadata).name), d] as const))('Deployment %s follows the rules', (_name, dep) => {
    const spec = podSpec(dep);
    const annotations = obj(obj(obj(obj(dep.spec).template).metadata).annotations ?? {}, 'pod annotations');
    const [c] = containers(dep);
    if (!c) throw new Error('no container');
    const ports = arr(c.ports).map((p) => obj(p));
    const portNumber = (p: unknown) => (typeof p === 'number' ? p : ports.find((x) => x.name === p)?.containerPort);

    for (const [probe, path] of [['livenessProbe', '/livez'], ['readinessProbe', '/readyz']] as const) {
      const get = obj(obj(c[probe], probe).httpGet, `${probe}.httpGet`);
      expect(get.path, probe).toBe(path);
      expect(portNumber(get.port), `${probe} port`).toBe(ports[0]?.containerPort);
    }

    expect(annotations['prometheus.io/scrape']).toBe('true');
    expect(annotations['prometheus.io/port']).toBe(String(ports[0]?.containerPort));
    expect(annotations['prometheus.io/path'] ?? '/metrics').toBe('/metrics');

    expect(Number(spec.terminationGracePeriodSeconds)).toBeGreaterThan(shutdownGraceMs(c) / 1000);

    const podSec = obj(spec.securityContext ?? {});
    const sec = obj(c.securityContext ?? {});
    expect(sec.runAsNonRoot ?? podSec.runAsNonRoot).toBe(true);
    expect(Number(sec.runAsUser ?? podSec.runAsUser), 'numeric non-root uid (the image user is a name)').toBeGreaterThan(0);
    expect(sec.allowPrivilegeEscalation).toBe(false);

    const resources = obj(c.resources, 'resources');
    expect(obj(resources.requests, 'requests').cpu).toBeDefined();
    expect(obj(resources.requests, 'requests').memory).toBeDefined();
    expect(obj(resources.limits, 'limits').memory).toBeDefined();

    const db = envOf(c).find((e) => e.name === 'DATABASE_URL');
    expect(db?.value, 'DATABASE_URL has no literal value').toBeUndefined();
    expect(obj(obj(db?.valueFrom, 'DATABASE_URL.valueFrom').secretKeyRef, 'secretKeyRef').key).toBe('DATABASE_URL');
    const fromConfig = arr(c.envFrom).map((e) => obj(e).configMapRef).filter(isObj);
    for (const ref of fromConfig) expect(configMapValue(String(ref.name), 'DATABASE_URL')).toBeUndefined();
    const redisUrl = fromConfig.map((ref) => configMapValue(String(ref.name), 'REDIS_URL')).find(Boolean);
    expect(redisUrl ?? envOf(c).find((e) => e.name === 'REDIS_URL')?.value).toMatch(/^rediss?:\/\//);
  });
});

describe('prometheus', () => {
  const config = parseYaml(read(deploy, 'prometheus/prometheus.yml'));
  const jobs = arr(config.scrape_configs).map((j) => obj(j));

  it.each(services)('scrapes %s in compose', (svc) => {
    const targets = jobs.flatMap((j) => arr(j.static_configs).flatMap((s) => arr(obj(s).targets).map(String)));
    expect(targets).toContain(`${svc}:${portOf(svc)}`);
  });

  it('scrapes every other target it names only for services that exist', () => {
    for (const j of jobs.filter((x) => x.job_name === 'vouch')) {
      for (const s of arr(j.static_configs)) {
        for (const t of arr(obj(s).targets)) expect(services).toContain(String(t).split(':')[0]);
      }
    }
  });

  it('Kubernetes variant discovers pods by the prometheus.io annotations', () => {
    const k8s = parseYaml(read(deploy, 'prometheus/prometheus-k8s.yml'));
    const job = arr(k8s.scrape_configs).map((j) => obj(j)).find((j) => j.job_name === 'vouch');
    expect(arr(job?.kubernetes_sd_configs).map((c) => obj(c).role)).toContain('pod');
    const relabel = arr(job?.relabel_configs).map((r) => obj(r));
    expect(relabel).toContainEqual(
      expect.objectContaining({ source_labels: ['__meta_kubernetes_pod_annotation_prometheus_io_scrape'], action: 'keep' }),
    );
    expect(relabel.some((r) => arr(r.source_labels).includes('__meta_kubernetes_pod_annotation_prometheus_io_port'))).toBe(true);
    expect(arr(k8s.rule_files)).toEqual(arr(config.rule_files));
  });

  const rules = parseYaml(read(deploy, 'prometheus/alerts.yml'));
  const groups = arr(rules.groups).map((g) => obj(g));
  const alerts = groups.flatMap((g) => arr(g.rules).map((r) => obj(r)));

  it('alert rules are well formed', () => {
    expect(new Set(groups.map((g) => g.name)).size).toBe(groups.length);
    expect(alerts.length).toBeGreaterThan(0);
    for (const a of alerts) {
      expect(a.alert, JSON.stringify(a)).toMatch(/^[A-Z][A-Za-z0-9]+$/);
      expect(typeof a.expr).toBe('string');
      expect(String(a.for)).toMatch(/^\d+[smh]$/);
      expect(obj(a.labels).severity).toMatch(/^(critical|warning|info)$/);
      expect(obj(a.annotations).summary).toBeTruthy();
    }
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length);
  });

  it('cover the documented failure modes', () => {
    const exprs = alerts.map((a) => String(a.expr).replace(/\s+/g, ' '));
    expect(exprs).toContainEqual(expect.stringMatching(/\bup\b.*==\s*0/));
    expect(exprs).toContainEqual(expect.stringMatching(/vouch_jobs_processed_total\{outcome="failed".*\/.*vouch_jobs_processed_total/));
    expect(exprs).toContainEqual(expect.stringMatching(/vouch_queue_jobs\{state="waiting"\}/));
    expect(exprs).toContainEqual(expect.stringMatching(/vouch_queue_jobs\{state="failed"\}.*>\s*0/));
    expect(exprs).toContainEqual(expect.stringMatching(/vouch_nodejs_eventloop_lag_seconds/));
    // One tenant's share of the cost, only while another tenant is active too.
    expect(exprs).toContainEqual(
      expect.stringMatching(/sum by \(tenant\) \(rate\(vouch_tenant_cost_units_total\[10m\]\)\) \/ scalar\(sum\(rate\(vouch_tenant_cost_units_total\[10m\]\)\)\) \) > 0\.8 and on \(\) count\(.*vouch_tenant_cost_units_total.*\) > 1/),
    );
    expect(exprs).toContainEqual(expect.stringMatching(/histogram_quantile\(0\.99, sum by \(tenant, le\) \(rate\(vouch_tenant_queue_wait_seconds_bucket/));
  });

  it('use only documented metric names and labels', () => {
    const problems = alerts.flatMap((a) => checkPromql(String(a.expr), String(a.alert)));
    expect(problems).toEqual([]);
  });
});

describe('grafana', () => {
  const datasources = arr(parseYaml(read(deploy, 'grafana/provisioning/datasources/prometheus.yml')).datasources).map((d) => obj(d));
  const dashboardFiles = readdirSync(join(deploy, 'grafana/dashboards')).filter((f) => f.endsWith('.json'));

  it('provisions a Prometheus datasource that compose can reach', () => {
    const prom = datasources.find((d) => d.type === 'prometheus');
    expect(prom?.uid).toBeTruthy();
    expect(prom?.url).toBe('http://prometheus:9090');
    expect(composeServices.prometheus).toBeDefined();
  });

  it('has the vouch overview dashboard', () => {
    expect(dashboardFiles).toContain('vouch-overview.json');
  });

  it.each(dashboardFiles)('%s: panels query the provisioned datasource with documented metrics', (file) => {
    const dash = obj(JSON.parse(read(deploy, 'grafana/dashboards', file)), file);
    expect(dash.uid).toBeTruthy();
    const flat = (ps: unknown[]): Obj[] => ps.map((p) => obj(p)).flatMap((p) => [p, ...flat(arr(p.panels))]);
    const panels = flat(arr(dash.panels));
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const uids = new Set(datasources.map((d) => d.uid));
    const problems: string[] = [];
    const exprs: string[] = [];
    for (const p of panels.filter((x) => x.type !== 'row')) {
      const pos = obj(p.gridPos, `${String(p.title)} gridPos`);
      if (Number(pos.x) + Number(pos.w) > 24) problems.push(`${String(p.title)}: wider than the grid`);
      for (const t of arr(p.targets).map((x) => obj(x))) {
        const ds = obj(t.datasource ?? p.datasource, `${String(p.title)} datasource`);
        if (!uids.has(ds.uid)) problems.push(`${String(p.title)}: unknown datasource uid ${String(ds.uid)}`);
        exprs.push(String(t.expr));
        problems.push(...checkPromql(String(t.expr), String(p.title)));
      }
    }
    for (const v of arr(obj(dash.templating ?? {}).list)) {
      const q = obj(v).query;
      problems.push(...checkPromql(typeof q === 'string' ? q : String(obj(q ?? {}).query ?? ''), `variable ${String(obj(v).name)}`));
    }
    expect(problems).toEqual([]);

    if (file === 'vouch-overview.json') {
      const all = exprs.join('\n');
      expect(all).toMatch(/rate\(vouch_jobs_processed_total\{[^}]*outcome="completed"/);
      expect(all).toMatch(/rate\(vouch_jobs_processed_total\{[^}]*outcome="failed"/);
      expect(all).toMatch(/histogram_quantile\(0\.5,[^\n]*vouch_job_duration_seconds_bucket/);
      expect(all).toMatch(/histogram_quantile\(0\.99,[^\n]*vouch_job_duration_seconds_bucket/);
      expect(all).toMatch(/by \(queue, state\) \(vouch_queue_jobs/);
      expect(all).toMatch(/rate\(vouch_http_requests_total/);
      expect(all).toMatch(/histogram_quantile\([^\n]*vouch_http_request_duration_seconds_bucket/);
      expect(all).toMatch(/vouch_nodejs_eventloop_lag_seconds/);
      expect(all).toMatch(/vouch_ledger_critiques_total/);
      expect(all).toMatch(/sum by \(tenant\) \(rate\(vouch_tenant_cost_units_total/);
      expect(all).toMatch(/histogram_quantile\(0\.99, sum by \(tenant, le\) \(rate\(vouch_tenant_queue_wait_seconds_bucket/);
      expect(all).toMatch(/sum by \(tenant, limit\) \(rate\(vouch_tenant_budget_refusals_total/);
    }
    if (file === 'vouch-vision-router.json') {
      const all = exprs.join('\n');
      for (const name of ['vouch_vision_stages_total', 'vouch_vision_escalations_total', 'vouch_vision_stage_duration_seconds_bucket', 'vouch_vision_cache_lookups_total', 'vouch_vision_ocr_confidence_bucket', 'vouch_vision_auxiliary_calls_total']) {
        expect(all, `a panel shows ${name}`).toContain(name);
      }
    }
  });
});
