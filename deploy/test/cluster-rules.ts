// The rules a rendered vouch deployment (kubectl kustomize output) must keep
// to run on a real cluster, each a pure function from the objects to the
// problems found (empty: the rule holds). gpu-overlay.test.ts runs them on the
// base and the GPU overlay, and on copies with one mistake planted each, so
// that every rule is seen to fail.
import { extractorEnvSchema } from '@vouch/extractor';

export type Obj = Record<string, unknown>;

export const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const nameOf = (doc: Obj) => String(obj(doc.metadata).name);
const where = (doc: Obj, container?: Obj) => `${String(doc.kind)}/${nameOf(doc)}${container ? ` container ${String(container.name)}` : ''}`;

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'Pod']);
export const workloads = (docs: Obj[]) => docs.filter((d) => WORKLOAD_KINDS.has(String(d.kind)));
export const podSpec = (w: Obj): Obj => (w.kind === 'Pod' ? obj(w.spec) : obj(obj(obj(w.spec).template).spec));
export const podLabels = (w: Obj): Obj => (w.kind === 'Pod' ? obj(obj(w.metadata).labels) : obj(obj(obj(obj(w.spec).template).metadata).labels));
export const initContainers = (w: Obj): Obj[] => arr(podSpec(w).initContainers).map(obj);
export const mainContainers = (w: Obj): Obj[] => arr(podSpec(w).containers).map(obj);
export const allContainers = (w: Obj): Obj[] => [...initContainers(w), ...mainContainers(w)];
export const envList = (c: Obj): Obj[] => arr(c.env).map(obj);
export const envVar = (c: Obj, name: string): Obj | undefined => envList(c).find((e) => e.name === name);
export const named = (docs: Obj[], kind: string, name: string) => docs.find((d) => d.kind === kind && nameOf(d) === name);

function configMapValue(docs: Obj[], name: string, key: string): string | undefined {
  const v = obj(named(docs, 'ConfigMap', name)?.data)[key];
  return v === undefined ? undefined : String(v);
}

/** The value a variable has in a container when it is fixed in the manifests (a literal or a ConfigMap key); undefined otherwise. */
export function staticEnv(docs: Obj[], c: Obj, name: string): string | undefined {
  const own = envVar(c, name);
  if (own) {
    if (own.value !== undefined) return String(own.value);
    const ref = obj(obj(own.valueFrom).configMapKeyRef);
    return ref.name ? configMapValue(docs, String(ref.name), String(ref.key)) : undefined;
  }
  for (const src of arr(c.envFrom).map(obj)) {
    const ref = obj(src.configMapRef);
    const v = ref.name ? configMapValue(docs, String(ref.name), name) : undefined;
    if (v !== undefined) return v;
  }
  return undefined;
}

/** Whether a label selector (matchLabels and matchExpressions) selects these labels. */
export function selects(selector: unknown, labels: Obj): boolean {
  const s = obj(selector);
  for (const [k, v] of Object.entries(obj(s.matchLabels))) if (labels[k] !== v) return false;
  for (const e of arr(s.matchExpressions).map(obj)) {
    const has = Object.hasOwn(labels, String(e.key));
    const value = labels[String(e.key)];
    const values = arr(e.values).map(String);
    const ok =
      e.operator === 'In' ? has && values.includes(String(value)) : e.operator === 'NotIn' ? !has || !values.includes(String(value)) : e.operator === 'Exists' ? has : e.operator === 'DoesNotExist' ? !has : false;
    if (!ok) return false;
  }
  return true;
}

const gpuLimit = (c: Obj) => Number(obj(obj(c.resources).limits)['nvidia.com/gpu'] ?? 0);
const isLoopback = (host: string) => /^(127\.|localhost$|\[?::1\]?$)/.test(host);
/** Ollama's bind address from OLLAMA_HOST (host:port, or a URL): its host part. */
const bindHost = (value: string) => value.replace(/^[a-z]+:\/\//, '').replace(/:\d+$/, '').replace(/\/.*$/, '');

// ---------------------------------------------------------------------------

/** Every image names a version: a tag other than latest (vouch's own: the x.y.z of a release), or a digest. */
export function imageProblems(docs: Obj[]): string[] {
  const problems: string[] = [];
  for (const w of workloads(docs)) {
    for (const c of allContainers(w)) {
      const image = String(c.image ?? '');
      if (/@sha256:[0-9a-f]{64}$/.test(image)) continue;
      const tag = /:([^/:]+)$/.exec(image)?.[1];
      if (!tag) problems.push(`${where(w, c)}: image ${image} has no tag (it means :latest)`);
      else if (tag === 'latest') problems.push(`${where(w, c)}: image ${image} is :latest, which names no version`);
      else if (image.startsWith('vouch/') && !/^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/.test(tag)) problems.push(`${where(w, c)}: image ${image}: a vouch image is tagged with its release (x.y.z)`);
    }
  }
  return problems;
}

/** The Secret key a variable is read from, as name/key. */
const secretOf = (e: Obj | undefined) => {
  const ref = obj(obj(e?.valueFrom).secretKeyRef);
  return ref.name ? `${String(ref.name)}/${String(ref.key)}` : undefined;
};

/**
 * Redis requires a password from a Secret, and everything that talks to it
 * (every process's REDIS_URL, KEDA's triggers) takes the same password from
 * the same Secret; no URL with or without it sits in a ConfigMap.
 */
export function redisAuthProblems(docs: Obj[]): string[] {
  const problems: string[] = [];
  const redis = workloads(docs).flatMap((w) => mainContainers(w).filter((c) => /^redis:/.test(String(c.image))).map((c) => ({ w, c })));
  if (redis.length === 0) return ['no Redis container'];
  let secret: string | undefined;
  for (const { w, c } of redis) {
    const argv = [...arr(c.command), ...arr(c.args)].map(String);
    const at = argv.indexOf('--requirepass');
    const variable = /^\$\(([A-Z0-9_]+)\)$/.exec(argv[at + 1] ?? '')?.[1];
    secret = variable ? secretOf(envVar(c, variable)) : undefined;
    if (at < 0 || !secret) problems.push(`${where(w, c)}: Redis runs without --requirepass $(VAR) taken from a Secret: anyone who reaches it may read and change every queue`);
  }
  for (const cm of docs.filter((d) => d.kind === 'ConfigMap')) {
    for (const [key, value] of Object.entries(obj(cm.data))) {
      if (key === 'REDIS_URL') problems.push(`ConfigMap/${nameOf(cm)}: holds REDIS_URL; build it in the Deployment from the Secret's password`);
      if (/^\s*requirepass\s/m.test(String(value))) problems.push(`ConfigMap/${nameOf(cm)}: ${key} sets requirepass in plain text`);
    }
  }
  for (const w of workloads(docs)) {
    for (const c of mainContainers(w)) {
      if (!String(c.image).startsWith('vouch/')) continue;
      const env = envList(c);
      const i = env.findIndex((e) => e.name === 'REDIS_URL');
      const url = i >= 0 ? env[i]?.value : undefined;
      const variable = /^rediss?:\/\/[^:@/]*:\$\(([A-Z0-9_]+)\)@/.exec(String(url ?? ''))?.[1];
      const source = variable ? env.slice(0, i).find((e) => e.name === variable) : undefined;
      if (!variable || !source) problems.push(`${where(w, c)}: REDIS_URL does not take its password from a variable defined before it (redis://:$(REDIS_PASSWORD)@host:6379)`);
      else if (secretOf(source) !== secret) problems.push(`${where(w, c)}: REDIS_URL's password comes from ${secretOf(source) ?? 'a literal'}, not from Redis's Secret ${secret ?? '(none)'}`);
    }
  }
  for (const so of docs.filter((d) => d.kind === 'ScaledObject')) {
    for (const t of arr(obj(so.spec).triggers).map(obj).filter((x) => x.type === 'redis')) {
      const auth = named(docs, 'TriggerAuthentication', String(obj(t.authenticationRef).name));
      const password = arr(obj(auth?.spec).secretTargetRef).map(obj).find((r) => r.parameter === 'password');
      const from = password ? `${String(password.name)}/${String(password.key)}` : undefined;
      if (!auth || from !== secret) problems.push(`ScaledObject/${nameOf(so)} trigger ${String(t.name ?? t.type)}: reads Redis without the password from ${secret ?? "Redis's Secret"} (authenticationRef to a TriggerAuthentication)`);
      if (obj(t.metadata).password !== undefined) problems.push(`ScaledObject/${nameOf(so)}: a Redis password in trigger metadata`);
    }
  }
  return problems;
}

/** Every Deployment has a PodDisruptionBudget that lets drains go on, one pod at a time, and never waits for a pod that is not Ready. */
export function disruptionBudgetProblems(docs: Obj[]): string[] {
  const problems: string[] = [];
  const pdbs = docs.filter((d) => d.kind === 'PodDisruptionBudget');
  for (const dep of docs.filter((d) => d.kind === 'Deployment')) {
    const mine = pdbs.filter((p) => selects(obj(p.spec).selector, podLabels(dep)));
    if (mine.length === 0) {
      problems.push(`Deployment/${nameOf(dep)}: no PodDisruptionBudget selects its pods`);
      continue;
    }
    for (const p of mine) {
      const spec = obj(p.spec);
      const max = spec.maxUnavailable;
      const allowsOne = max !== undefined ? (typeof max === 'number' ? max >= 1 : /^[1-9]\d*%$/.test(String(max))) : Number(spec.minAvailable) < Number(obj(dep.spec).replicas ?? 1);
      if (!allowsOne) problems.push(`PodDisruptionBudget/${nameOf(p)}: allows no eviction of Deployment/${nameOf(dep)}: node drains would hang`);
      if (spec.unhealthyPodEvictionPolicy !== 'AlwaysAllow') problems.push(`PodDisruptionBudget/${nameOf(p)}: unhealthyPodEvictionPolicy is not AlwaysAllow: a pod that is not Ready (a failed GPU gate) holds drains up`);
    }
  }
  return problems;
}

/** Ports a NetworkPolicy rule opens for a container (by number or by name); all of them when it names none. */
const opens = (rule: Obj, port: Obj) => {
  const ports = arr(rule.ports).map(obj);
  return ports.length === 0 || ports.some((p) => p.port === port.containerPort || p.port === port.name);
};

/**
 * Ingress is denied by default; Redis admits only pods a policy names (and each
 * process that uses Redis is among them); Prometheus can reach each
 * Deployment's metrics port.
 */
export function networkPolicyProblems(docs: Obj[]): string[] {
  const problems: string[] = [];
  const policies = docs.filter((d) => d.kind === 'NetworkPolicy');
  const ingressOf = (p: Obj) => arr(obj(p.spec).ingress).map(obj);
  const isDenyAll = (p: Obj) => Object.keys(obj(obj(p.spec).podSelector)).length === 0 && arr(obj(p.spec).policyTypes).includes('Ingress') && ingressOf(p).length === 0;
  if (!policies.some(isDenyAll)) problems.push('no NetworkPolicy denies ingress by default (podSelector {}, policyTypes [Ingress], no rules)');

  const redisPods = workloads(docs).filter((w) => mainContainers(w).some((c) => /^redis:/.test(String(c.image))));
  for (const r of redisPods) {
    const port = obj(arr(mainContainers(r)[0]?.ports)[0]);
    const rules = policies.filter((p) => selects(obj(p.spec).podSelector, podLabels(r))).flatMap(ingressOf).filter((rule) => opens(rule, port));
    for (const rule of rules) if (arr(rule.from).length === 0) problems.push(`${where(r)}: a NetworkPolicy admits any pod to Redis`);
    for (const w of workloads(docs)) {
      if (!mainContainers(w).some((c) => envVar(c, 'REDIS_URL'))) continue;
      const admitted = rules.some((rule) => arr(rule.from).map(obj).some((f) => f.podSelector !== undefined && f.namespaceSelector === undefined && selects(f.podSelector, podLabels(w))));
      if (!admitted) problems.push(`${where(w)}: uses Redis, but no NetworkPolicy admits its pods to ${where(r)}`);
    }
  }

  for (const dep of docs.filter((d) => d.kind === 'Deployment')) {
    const annotations = obj(obj(obj(obj(dep.spec).template).metadata).annotations);
    const metricsPort = Number(annotations['prometheus.io/port']);
    const port = mainContainers(dep).flatMap((c) => arr(c.ports).map(obj)).find((p) => p.containerPort === metricsPort);
    if (!port) continue;
    const reachable = policies
      .filter((p) => selects(obj(p.spec).podSelector, podLabels(dep)))
      .flatMap(ingressOf)
      .some((rule) => opens(rule, port) && (arr(rule.from).length === 0 || arr(rule.from).map(obj).some((f) => f.namespaceSelector !== undefined)));
    if (!reachable) problems.push(`Deployment/${nameOf(dep)}: no NetworkPolicy lets Prometheus (another namespace) reach its metrics port ${metricsPort}`);
  }
  return problems;
}

/** The extractor's configuration as a container gets it, defaults included (the service's own schema). */
function extractorConfig(docs: Obj[], c: Obj) {
  const env: Record<string, string> = {};
  for (const e of envList(c)) {
    const v = staticEnv(docs, c, String(e.name));
    if (v !== undefined) env[String(e.name)] = v;
  }
  for (const src of arr(c.envFrom).map(obj)) {
    for (const [k, v] of Object.entries(obj(named(docs, 'ConfigMap', String(obj(src.configMapRef).name))?.data))) env[k] ??= String(v);
  }
  // Secret-backed and start-time values the schema needs to parse.
  return extractorEnvSchema.parse({ ...env, REDIS_URL: 'redis://redis:6379', DATABASE_URL: 'postgres://db/vouch', OLLAMA_HOST: env.OLLAMA_HOST ?? 'http://127.0.0.1:11434' });
}

/**
 * The longest an LLM extraction job can run: the gate before it (up to three
 * Ollama calls, each within EXTRACTOR_LLM_TIMEOUT_MS, and one nvidia-smi) and
 * EXTRACTOR_MAX_WINDOWS generations, each within EXTRACTOR_LLM_TIMEOUT_MS.
 */
export function longestExtractionMs(cfg: { EXTRACTOR_MAX_WINDOWS: number; EXTRACTOR_LLM_TIMEOUT_MS: number; NVIDIA_SMI_TIMEOUT_MS: number }): number {
  return (cfg.EXTRACTOR_MAX_WINDOWS + 3) * cfg.EXTRACTOR_LLM_TIMEOUT_MS + cfg.NVIDIA_SMI_TIMEOUT_MS;
}

const UUID = /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The GPU workers (Deployments with a container that holds nvidia.com/gpu):
 * they come up on a real cluster, each on the GPU the device plugin gives it,
 * gated against an allow-list, with the model provisioned, and they stop
 * without abandoning an extraction.
 */
export function gpuWorkerProblems(docs: Obj[]): string[] {
  const problems: string[] = [];
  const scaled = new Set(docs.filter((d) => d.kind === 'ScaledObject').map((so) => String(obj(obj(so.spec).scaleTargetRef).name)));
  for (const dep of docs.filter((d) => d.kind === 'Deployment' && allContainers(d).some((c) => gpuLimit(c) > 0))) {
    const spec = podSpec(dep);
    const at = where(dep);
    if (spec.runtimeClassName !== 'nvidia') problems.push(`${at}: runtimeClassName is not nvidia: without the NVIDIA runtime the GPU is not mounted and Ollama runs on the CPU`);
    if (scaled.has(nameOf(dep)) && obj(dep.spec).replicas !== undefined) problems.push(`${at}: sets replicas, which KEDA owns: every apply resets the count KEDA chose`);
    const strategy = obj(obj(dep.spec).strategy);
    const surge = obj(strategy.rollingUpdate).maxSurge;
    if (strategy.type !== 'Recreate' && !(surge === 0 || surge === '0%')) problems.push(`${at}: a rolling update that surges needs a spare GPU: use Recreate or maxSurge 0`);

    const gpuHolders = allContainers(dep).filter((c) => gpuLimit(c) > 0);
    for (const c of gpuHolders) {
      if (gpuLimit(c) !== 1) problems.push(`${where(dep, c)}: holds ${gpuLimit(c)} GPUs; one GPU per pod, scale by replicas`);
      for (const pin of ['CUDA_VISIBLE_DEVICES', 'NVIDIA_VISIBLE_DEVICES']) {
        if (staticEnv(docs, c, pin) !== undefined) problems.push(`${where(dep, c)}: ${pin} is fixed in the manifests: every replica asks for the same GPU; the device plugin chooses each pod's`);
      }
    }

    // The gate: an allow-list of UUIDs; the device it checks is the pod's own, known at start only.
    for (const c of mainContainers(dep).filter((x) => staticEnv(docs, x, 'EXTRACTOR_LLM_ENABLED') === 'true')) {
      const list = staticEnv(docs, c, 'EXTRACTOR_APPROVED_GPU_UUIDS');
      const uuids = (list ?? '').split(/[\s,]+/).filter(Boolean);
      if (uuids.length === 0 || uuids.some((u) => !UUID.test(u))) problems.push(`${where(dep, c)}: EXTRACTOR_APPROVED_GPU_UUIDS is not a list of GPU UUIDs (${JSON.stringify(list ?? null)})`);
      if (staticEnv(docs, c, 'OLLAMA_CUDA_VISIBLE_DEVICES') !== undefined) {
        problems.push(`${where(dep, c)}: OLLAMA_CUDA_VISIBLE_DEVICES is fixed in the manifests: the gate would check one configured GPU, not the one the device plugin gave this pod`);
      }
      const publisher = gpuHolders.find((h) => arr(h.command).map(String).some((a) => a.endsWith('start-ollama.sh')));
      const reader = arr(c.command).map(String).some((a) => a.endsWith('start-extractor.sh'));
      const shared = publisher && arr(publisher.volumeMounts).map(obj).some((m) => m.mountPath === '/run/vouch-gpu' && arr(c.volumeMounts).map(obj).some((n) => n.name === m.name && n.mountPath === '/run/vouch-gpu'));
      if (!publisher || !reader || !shared) problems.push(`${where(dep, c)}: the gate does not get the pod's own GPU (start-ollama.sh publishing it, start-extractor.sh reading it, both mounting /run/vouch-gpu)`);

      const cfg = extractorConfig(docs, c);
      const longest = longestExtractionMs(cfg);
      const grace = Number(spec.terminationGracePeriodSeconds ?? 30) * 1000;
      if (cfg.SHUTDOWN_GRACE_MS < longest) {
        problems.push(`${where(dep, c)}: SHUTDOWN_GRACE_MS ${cfg.SHUTDOWN_GRACE_MS} is shorter than the longest extraction (${longest} ms): a stop abandons a running job`);
      }
      // The extractor closes its CPU and GPU workers together (queue-service.ts, onStopping), each waiting up to
      // SHUTDOWN_GRACE_MS; the rest of the stop (Redis, Postgres) needs a few seconds more.
      if (!(grace >= cfg.SHUTDOWN_GRACE_MS + 30_000)) {
        problems.push(`${at}: terminationGracePeriodSeconds ${grace / 1000} is not 30 s above SHUTDOWN_GRACE_MS (${cfg.SHUTDOWN_GRACE_MS} ms, the workers' close): SIGKILL would cut a running extraction`);
      }
    }

    // Ollama (the containers of an ollama/ image that serve: OLLAMA_HOST set): its model store, its readiness, its lifetime.
    const volumes = arr(spec.volumes).map(obj);
    const servers = allContainers(dep).filter((c) => /^ollama\//.test(String(c.image)) && envVar(c, 'OLLAMA_HOST'));
    for (const c of servers) {
      const models = staticEnv(docs, c, 'OLLAMA_MODELS') ?? '(unset: $HOME/.ollama/models)';
      const mount = arr(c.volumeMounts).map(obj).find((m) => m.mountPath === models);
      const volume = volumes.find((v) => v.name === mount?.name);
      if (!volume?.persistentVolumeClaim) problems.push(`${where(dep, c)}: OLLAMA_MODELS ${models} is not on a prepared volume (a PersistentVolumeClaim): the warm-up never finds the model, and an air-gapped cluster cannot pull it`);
      else if (!initContainers(dep).some((i) => i.restartPolicy !== 'Always' && arr(i.volumeMounts).map(obj).some((m) => m.name === mount?.name))) {
        problems.push(`${at}: no init step checks that the model is in volume ${String(mount?.name)} before Ollama starts`);
      }

      const bind = staticEnv(docs, c, 'OLLAMA_HOST') ?? '';
      const probes = ['startupProbe', 'readinessProbe', 'livenessProbe'].map((p) => ({ p, probe: obj(c[p]) })).filter((x) => Object.keys(x.probe).length > 0);
      if (!probes.some((x) => x.p === 'readinessProbe')) problems.push(`${where(dep, c)}: Ollama has no readiness probe`);
      for (const { p, probe } of probes) {
        if ((probe.httpGet || probe.tcpSocket || probe.grpc) && isLoopback(bindHost(bind))) {
          problems.push(`${where(dep, c)}: ${p} calls the pod IP while Ollama listens on ${bind} (OLLAMA_HOST): it never answers; probe with exec inside the container, or bind 0.0.0.0`);
        }
      }
      if (!initContainers(dep).some((i) => i === c && i.restartPolicy === 'Always')) {
        problems.push(`${where(dep, c)}: Ollama is not a native sidecar (an init container with restartPolicy Always): it is stopped together with the extractor, and a running extraction loses its model`);
      }
    }
    for (const c of allContainers(dep)) {
      for (const p of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
        const host = obj(obj(c[p]).httpGet).host;
        if (typeof host === 'string' && isLoopback(host)) problems.push(`${where(dep, c)}: ${p}.httpGet.host ${host} is the node's loopback, not the pod's`);
      }
    }
  }
  return problems;
}

/**
 * KEDA scales each GPU Deployment from zero on the sum of the waiting and the
 * running jobs of its queue (BullMQ's <prefix>:<queue>:wait and :active lists).
 */
export function kedaProblems(docs: Obj[], opts: { prefix: string; queue: string }): string[] {
  const problems: string[] = [];
  for (const so of docs.filter((d) => d.kind === 'ScaledObject')) {
    const spec = obj(so.spec);
    const at = `ScaledObject/${nameOf(so)}`;
    if (!named(docs, 'Deployment', String(obj(spec.scaleTargetRef).name))) problems.push(`${at}: scales ${String(obj(spec.scaleTargetRef).name)}, which is not deployed`);
    if (spec.minReplicaCount !== 0) problems.push(`${at}: minReplicaCount is ${String(spec.minReplicaCount ?? 'unset (0)')}; set 0 explicitly so idle GPUs are released`);
    if (!(Number(spec.maxReplicaCount) >= 1)) problems.push(`${at}: maxReplicaCount must allow at least one replica`);
    const triggers = arr(spec.triggers).map(obj);
    const list = (suffix: string) => triggers.find((t) => t.type === 'redis' && obj(t.metadata).listName === `${opts.prefix}:${opts.queue}:${suffix}`);
    const wait = list('wait');
    const active = list('active');
    if (!wait || !active) {
      problems.push(`${at}: does not read both ${opts.prefix}:${opts.queue}:wait and :active`);
      continue;
    }
    const modifiers = obj(obj(spec.advanced).scalingModifiers);
    const terms = String(modifiers.formula ?? '').split('+').map((s) => s.trim());
    const names = [wait.name, active.name].map(String);
    if (!wait.name || !active.name || terms.length !== 2 || !names.every((n) => terms.includes(n))) {
      problems.push(`${at}: replicas do not follow waiting + running jobs (advanced.scalingModifiers.formula "${names.join(' + ')}"); KEDA takes the larger of two triggers, not their sum`);
    }
    if (modifiers.formula !== undefined && (modifiers.target !== '1' || modifiers.metricType !== 'AverageValue')) {
      problems.push(`${at}: the summed jobs must be divided among replicas one each (target "1", metricType AverageValue)`);
    }
    if (modifiers.activationTarget !== undefined && modifiers.activationTarget !== '0') problems.push(`${at}: activationTarget ${String(modifiers.activationTarget)} leaves a first job waiting with no replica`);
  }
  return problems;
}
