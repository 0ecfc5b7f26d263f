// The base, the gpu overlay and its prepare/ step, rendered by kustomize,
// validated strictly against the Kubernetes and KEDA schemas (k8s-schema.ts:
// unknown fields refused), then held to the rules a real GPU cluster needs
// (cluster-rules.ts). Every rule is also run on a copy with one mistake
// planted, and must refuse it.
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { QUEUES } from '@vouch/contracts';
import { extractorEnvSchema } from '@vouch/extractor';
import {
  allContainers,
  arr,
  disruptionBudgetProblems,
  envList,
  gpuWorkerProblems,
  imageProblems,
  initContainers,
  kedaProblems,
  longestExtractionMs,
  mainContainers,
  named,
  networkPolicyProblems,
  obj,
  podSpec,
  redisAuthProblems,
  staticEnv,
  type Obj,
} from './cluster-rules.js';
import { schemaProblems } from './k8s-schema.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** kubectl ships kustomize (`kubectl kustomize`); the node-svc machine image has kubectl. */
function render(dir: string): Obj[] {
  let out: string;
  try {
    out = execFileSync('kubectl', ['kustomize', join(root, dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error('kubectl is not installed: the render test needs `kubectl kustomize` (apt-get install kubectl, or a kustomize binary on PATH named kubectl)', { cause: err });
    throw new Error(`kubectl kustomize ${dir} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
  return parseAllDocuments(out).map((d) => d.toJS() as Obj).filter(Boolean);
}

const RENDERED: Record<string, Obj[]> = {
  'deploy/k8s/base': render('deploy/k8s/base'),
  'deploy/k8s/overlays/gpu': render('deploy/k8s/overlays/gpu'),
  'deploy/k8s/overlays/gpu/prepare': render('deploy/k8s/overlays/gpu/prepare'),
};
const base = RENDERED['deploy/k8s/base']!;
const gpu = RENDERED['deploy/k8s/overlays/gpu']!;
const prefix = String(obj(named(gpu, 'ConfigMap', 'vouch-config')?.data).BULLMQ_PREFIX);
const keda = { prefix, queue: QUEUES.extractorGpu };

/** A copy of the objects with one change made by `change`. */
function planted(docs: Obj[], change: (copy: Obj[]) => void): Obj[] {
  const copy = structuredClone(docs);
  change(copy);
  return copy;
}
const must = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`${what} is missing`);
  return v;
};
const gpuDeployment = (docs: Obj[]) => must(named(docs, 'Deployment', 'extractor-gpu'), 'Deployment extractor-gpu');
const containerOf = (docs: Obj[], name: string) => must(allContainers(gpuDeployment(docs)).find((c) => c.name === name), `container ${name}`);
const setEnv = (c: Obj, name: string, value: string) => {
  const env = arr(c.env).map(obj).filter((e) => e.name !== name);
  c.env = [...env, { name, value }];
};
const dropEnv = (c: Obj, name: string) => {
  c.env = arr(c.env).map(obj).filter((e) => e.name !== name);
};

describe.each(Object.keys(RENDERED))('%s rendered by kustomize', (dir) => {
  const docs = RENDERED[dir]!;

  it('is valid against the strict Kubernetes (and KEDA) schemas, every object in the vouch namespace', () => {
    expect(docs.length).toBeGreaterThan(0);
    expect(docs.flatMap(schemaProblems)).toEqual([]);
    for (const doc of docs.filter((d) => d.kind !== 'Namespace')) expect(obj(doc.metadata).namespace, `${String(doc.kind)}/${String(obj(doc.metadata).name)}`).toBe('vouch');
  });

  it('names a version in every image', () => {
    expect(imageProblems(docs)).toEqual([]);
  });
});

describe('the strict schemas refuse what an API server would', () => {
  const cases: [string, (copy: Obj[]) => void, RegExp][] = [
    ['a misspelt livenessProbe', (d) => Object.assign(containerOf(d, 'extractor'), { livenesProbe: containerOf(d, 'extractor').livenessProbe }), /containers\[0\]\.livenesProbe: unknown field/],
    ['a field KEDA does not have', (d) => Object.assign(obj(must(named(d, 'ScaledObject', 'extractor-gpu'), 'ScaledObject').spec), { minReplicas: 0 }), /ScaledObject\/extractor-gpu\.spec\.minReplicas: unknown field/],
    ['a misspelt field deep in a NetworkPolicy', (d) => Object.assign(obj(arr(obj(must(named(d, 'NetworkPolicy', 'redis-clients'), 'NetworkPolicy').spec).ingress)[0]), { form: [] }), /ingress\[0\]\.form: unknown field/],
    ['a misspelt volume source', (d) => Object.assign(obj(arr(podSpec(gpuDeployment(d)).volumes).map(obj).find((v) => v.name === 'models')), { persistentVolumeClam: {} }), /volumes\[\d+\]\.persistentVolumeClam: unknown field/],
    ['a string where an integer belongs', (d) => Object.assign(obj(must(named(d, 'Deployment', 'gateway'), 'gateway').spec), { replicas: 'two' }), /replicas must be integer/],
    ['a kind vouch does not deploy', (d) => d.push({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'x' } }), /no schema for batch\/v1 CronJob/],
  ];
  it.each(cases)('refuses %s', (_what, change, problem) => {
    expect(gpu.flatMap(schemaProblems)).toEqual([]);
    expect(planted(gpu, change).flatMap(schemaProblems).join('\n')).toMatch(problem);
  });
});

describe('base and gpu overlay keep to the cluster rules', () => {
  it.each([['deploy/k8s/base', base], ['deploy/k8s/overlays/gpu', gpu]] as const)('%s: Redis auth, disruption budgets, network policies', (_dir, docs) => {
    expect(redisAuthProblems(docs)).toEqual([]);
    expect(disruptionBudgetProblems(docs)).toEqual([]);
    expect(networkPolicyProblems(docs)).toEqual([]);
  });

  it('gpu overlay: GPU workers and KEDA', () => {
    expect(gpuWorkerProblems(gpu)).toEqual([]);
    expect(kedaProblems(gpu, keda)).toEqual([]);
  });

  type Rule = (docs: Obj[]) => string[];
  const rules: Record<string, Rule> = {
    images: imageProblems,
    redis: redisAuthProblems,
    pdb: disruptionBudgetProblems,
    network: networkPolicyProblems,
    gpu: gpuWorkerProblems,
    keda: (docs) => kedaProblems(docs, keda),
  };
  const mistakes: [string, keyof typeof rules, (copy: Obj[]) => void, RegExp][] = [
    ['an image at :latest', 'images', (d) => Object.assign(containerOf(d, 'extractor'), { image: 'vouch/extractor:latest' }), /vouch\/extractor:latest is :latest/],
    ['an image without a tag', 'images', (d) => Object.assign(containerOf(d, 'ollama'), { image: 'ollama/ollama' }), /ollama\/ollama has no tag/],
    ['Redis without requirepass', 'redis', (d) => Object.assign(mainContainers(must(named(d, 'StatefulSet', 'redis'), 'redis'))[0]!, { args: ['/etc/redis/redis.conf'] }), /Redis runs without --requirepass/],
    ['a REDIS_URL without the password', 'redis', (d) => setEnv(containerOf(d, 'extractor'), 'REDIS_URL', 'redis://redis:6379'), /extractor-gpu container extractor: REDIS_URL does not take its password/],
    ['REDIS_URL back in the shared ConfigMap', 'redis', (d) => Object.assign(obj(must(named(d, 'ConfigMap', 'vouch-config'), 'vouch-config').data), { REDIS_URL: 'redis://redis:6379' }), /ConfigMap\/vouch-config: holds REDIS_URL/],
    ['KEDA reading Redis without the password', 'redis', (d) => d.splice(d.findIndex((x) => x.kind === 'TriggerAuthentication'), 1), /trigger wait: reads Redis without the password/],
    ['a Deployment without a PodDisruptionBudget', 'pdb', (d) => d.splice(d.findIndex((x) => x.kind === 'PodDisruptionBudget' && obj(x.metadata).name === 'extractor-gpu'), 1), /Deployment\/extractor-gpu: no PodDisruptionBudget/],
    ['a budget that waits for pods that are not Ready', 'pdb', (d) => delete obj(must(named(d, 'PodDisruptionBudget', 'extractor-gpu'), 'pdb').spec).unhealthyPodEvictionPolicy, /unhealthyPodEvictionPolicy is not AlwaysAllow/],
    ['a budget that allows no eviction', 'pdb', (d) => Object.assign(obj(must(named(d, 'PodDisruptionBudget', 'gateway'), 'pdb').spec), { maxUnavailable: 0 }), /allows no eviction of Deployment\/gateway/],
    ['no default deny', 'network', (d) => d.splice(d.findIndex((x) => x.kind === 'NetworkPolicy' && obj(x.metadata).name === 'default-deny-ingress'), 1), /no NetworkPolicy denies ingress by default/],
    ['a Redis client without the label that admits it', 'network', (d) => delete obj(obj(obj(obj(gpuDeployment(d).spec).template).metadata).labels)['vouch.dev/redis-client'], /Deployment\/extractor-gpu: uses Redis, but no NetworkPolicy admits/],
    ['Redis open to every pod', 'network', (d) => arr(obj(must(named(d, 'NetworkPolicy', 'redis-clients'), 'np').spec).ingress).push({ ports: [{ port: 6379 }] }), /admits any pod to Redis/],
    ['metrics unreachable for Prometheus', 'network', (d) => d.splice(d.findIndex((x) => x.kind === 'NetworkPolicy' && obj(x.metadata).name === 'extractor-gpu-scrape'), 1), /Deployment\/extractor-gpu: no NetworkPolicy lets Prometheus/],
    ['no runtimeClassName', 'gpu', (d) => delete podSpec(gpuDeployment(d)).runtimeClassName, /runtimeClassName is not nvidia/],
    ['replicas beside KEDA', 'gpu', (d) => Object.assign(obj(gpuDeployment(d).spec), { replicas: 1 }), /sets replicas, which KEDA owns/],
    ['the default rolling update', 'gpu', (d) => delete obj(gpuDeployment(d).spec).strategy, /needs a spare GPU/],
    ['one GPU pinned for every replica', 'gpu', (d) => setEnv(containerOf(d, 'ollama'), 'CUDA_VISIBLE_DEVICES', 'GPU-00000000-0000-0000-0000-000000000000'), /CUDA_VISIBLE_DEVICES is fixed in the manifests/],
    ['the gate checking a configured GPU', 'gpu', (d) => setEnv(containerOf(d, 'extractor'), 'OLLAMA_CUDA_VISIBLE_DEVICES', 'GPU-00000000-0000-0000-0000-000000000000'), /OLLAMA_CUDA_VISIBLE_DEVICES is fixed in the manifests/],
    ['an allow-list that is not UUIDs', 'gpu', (d) => setEnv(containerOf(d, 'extractor'), 'EXTRACTOR_APPROVED_GPU_UUIDS', '0,1'), /EXTRACTOR_APPROVED_GPU_UUIDS is not a list of GPU UUIDs/],
    ['the model store on an emptyDir', 'gpu', (d) => Object.assign(obj(arr(podSpec(gpuDeployment(d)).volumes).map(obj).find((v) => v.name === 'models')), { persistentVolumeClaim: undefined, emptyDir: {} }), /OLLAMA_MODELS \/models is not on a prepared volume/],
    ['no init step checking the model', 'gpu', (d) => Object.assign(podSpec(gpuDeployment(d)), { initContainers: initContainers(gpuDeployment(d)).filter((c) => c.name !== 'check-model') }), /no init step checks that the model/],
    ['an HTTP probe of Ollama on loopback', 'gpu', (d) => Object.assign(containerOf(d, 'ollama'), { readinessProbe: { httpGet: { path: '/', port: 'ollama' } } }), /readinessProbe calls the pod IP while Ollama listens on 127\.0\.0\.1:11434/],
    ['a probe aimed at the node loopback', 'gpu', (d) => Object.assign(obj(containerOf(d, 'extractor').livenessProbe), { httpGet: { path: '/livez', port: 'http', host: '127.0.0.1' } }), /httpGet\.host 127\.0\.0\.1 is the node's loopback/],
    [
      'Ollama as an ordinary container',
      'gpu',
      (d) => {
        const spec = podSpec(gpuDeployment(d));
        const ollama = containerOf(d, 'ollama');
        delete ollama.restartPolicy;
        spec.initContainers = initContainers(gpuDeployment(d)).filter((c) => c.name !== 'ollama');
        spec.containers = [...mainContainers(gpuDeployment(d)), ollama];
      },
      /Ollama is not a native sidecar/,
    ],
    ['the 25 s shutdown grace of vouch-config', 'gpu', (d) => dropEnv(containerOf(d, 'extractor'), 'SHUTDOWN_GRACE_MS'), /SHUTDOWN_GRACE_MS 25000 is shorter than the longest extraction \(505000 ms\)/],
    ['a pod grace not 30 s above the workers\' close', 'gpu', (d) => Object.assign(podSpec(gpuDeployment(d)), { terminationGracePeriodSeconds: 560 }), /terminationGracePeriodSeconds 560 is not 30 s above SHUTDOWN_GRACE_MS/],
    ['KEDA on the larger of two triggers', 'keda', (d) => delete obj(must(named(d, 'ScaledObject', 'extractor-gpu'), 'so').spec).advanced, /replicas do not follow waiting \+ running jobs/],
    ['KEDA never scaling to zero', 'keda', (d) => Object.assign(obj(must(named(d, 'ScaledObject', 'extractor-gpu'), 'so').spec), { minReplicaCount: 1 }), /minReplicaCount is 1/],
    ['KEDA counting waiting jobs only', 'keda', (d) => Object.assign(obj(must(named(d, 'ScaledObject', 'extractor-gpu'), 'so').spec), { triggers: arr(obj(must(named(d, 'ScaledObject', 'extractor-gpu'), 'so').spec).triggers).slice(0, 1) }), /does not read both vouch:extractor-gpu:wait and :active/],
  ];
  it.each(mistakes)('refuses %s', (_what, rule, change, problem) => {
    const check = rules[rule]!;
    expect(check(gpu)).toEqual([]);
    expect(check(planted(gpu, change)).join('\n')).toMatch(problem);
  });
});

describe('the gpu overlay runs gated LLM extraction on approved GPU nodes', () => {
  const dep = gpuDeployment(gpu);
  const spec = podSpec(dep);
  const extractor = containerOf(gpu, 'extractor');
  const ollama = containerOf(gpu, 'ollama');
  const value = (c: Obj, name: string) => staticEnv(gpu, c, name);

  it('keeps the CPU extractor of the base and adds the GPU Deployment: model check, Ollama sidecar, extractor', () => {
    expect(named(gpu, 'Deployment', 'extractor')).toBeDefined();
    expect(initContainers(dep).map((c) => [c.name, c.restartPolicy ?? null])).toEqual([['check-model', null], ['ollama', 'Always']]);
    expect(mainContainers(dep).map((c) => c.name)).toEqual(['extractor']);
  });

  it('places it on approved GPU nodes: node selector, toleration, one nvidia.com/gpu for Ollama, the NVIDIA runtime', () => {
    expect(obj(spec.nodeSelector)).toEqual({ 'nvidia.com/gpu.present': 'true', 'vouch.dev/approved-gpu': 'true' });
    expect(arr(spec.tolerations).map(obj)).toContainEqual(expect.objectContaining({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }));
    expect(obj(obj(ollama.resources).limits)['nvidia.com/gpu']).toBe(1);
    expect(spec.runtimeClassName).toBe('nvidia');
  });

  it('gates each pod on the GPU it was given, against the allow-list from the extractor-gpu ConfigMap', () => {
    const cm = gpu.find((d) => d.kind === 'ConfigMap' && String(obj(d.metadata).name).startsWith('extractor-gpu-') && obj(d.data).EXTRACTOR_APPROVED_GPU_UUIDS);
    const ref = obj(obj(envList(extractor).find((e) => e.name === 'EXTRACTOR_APPROVED_GPU_UUIDS')?.valueFrom).configMapKeyRef);
    expect(ref).toEqual({ name: obj(cm?.metadata).name, key: 'EXTRACTOR_APPROVED_GPU_UUIDS' });
    // The same list the extractor reads (services/extractor/src/config.ts): the gate parses it as comma-separated UUIDs.
    expect(Object.keys(extractorEnvSchema.shape)).toContain('EXTRACTOR_APPROVED_GPU_UUIDS');
    expect(value(extractor, 'OLLAMA_CUDA_VISIBLE_DEVICES')).toBeUndefined();
    expect(value(ollama, 'CUDA_VISIBLE_DEVICES')).toBeUndefined();
    expect(extractor.command).toEqual(['/bin/sh', '/opt/vouch-gpu/start-extractor.sh']);
    expect(ollama.command).toEqual(['/bin/sh', '/opt/vouch-gpu/start-ollama.sh']);
    // The gate's nvidia-smi is the wrapper limited to the pod's GPU, executable from the scripts volume.
    expect(value(extractor, 'NVIDIA_SMI')).toBe('/opt/vouch-gpu/pod-nvidia-smi.sh');
    const scripts = arr(spec.volumes).map(obj).find((v) => v.name === 'scripts');
    expect(obj(scripts?.configMap).defaultMode).toBe(0o555);
    const scriptData = obj(gpu.find((d) => d.kind === 'ConfigMap' && obj(d.metadata).name === obj(scripts?.configMap).name)?.data);
    expect(Object.keys(scriptData).sort()).toEqual(['check-model.sh', 'pod-nvidia-smi.sh', 'start-extractor.sh', 'start-ollama.sh']);
  });

  it('is ready only through /readyz (the GPU gate), one job per GPU, a lock above the longest generation', () => {
    expect(obj(obj(extractor.readinessProbe).httpGet).path).toBe('/readyz');
    expect(value(extractor, 'EXTRACTOR_LLM_ENABLED')).toBe('true');
    expect(value(extractor, 'EXTRACTOR_GPU_CONCURRENCY')).toBe('1');
    expect(value(extractor, 'OLLAMA_HOST')).toBe('http://127.0.0.1:11434');
    expect(Number(value(extractor, 'EXTRACTOR_LLM_LOCK_MS'))).toBeGreaterThan(Number(value(extractor, 'EXTRACTOR_LLM_TIMEOUT_MS')));
  });

  // The rule this file checked before compared the pod's grace with 25 s plus one
  // generation: it passed while SHUTDOWN_GRACE_MS stayed at 25 s, so the process
  // itself gave up on a running extraction after 25 s at every scale-down.
  it('waits for the longest extraction when it stops: SHUTDOWN_GRACE_MS covers it, the pod grace covers both worker closes', () => {
    const cfg = extractorEnvSchema.parse({
      ...Object.fromEntries(envList(extractor).map((e) => [String(e.name), value(extractor, String(e.name))]).filter(([, v]) => v !== undefined)),
      REDIS_URL: 'redis://redis:6379',
      DATABASE_URL: 'postgres://db/vouch',
    });
    expect(longestExtractionMs(cfg)).toBe((8 + 3) * 45_000 + 10_000);
    expect(cfg.SHUTDOWN_GRACE_MS).toBeGreaterThanOrEqual(longestExtractionMs(cfg));
    expect(Number(spec.terminationGracePeriodSeconds) * 1000).toBeGreaterThanOrEqual(cfg.SHUTDOWN_GRACE_MS + 30_000);
  });

  it('reads the model from the volume prepared once (prepare/), read-only, checked before Ollama starts', () => {
    const prepare = RENDERED['deploy/k8s/overlays/gpu/prepare']!;
    const claim = obj(arr(spec.volumes).map(obj).find((v) => v.name === 'models')?.persistentVolumeClaim);
    expect(claim).toEqual({ claimName: 'ollama-models', readOnly: true });
    expect(obj(named(prepare, 'PersistentVolumeClaim', 'ollama-models')?.spec).accessModes).toEqual(['ReadWriteMany']);
    expect(named(gpu, 'PersistentVolumeClaim', 'ollama-models'), 'the model volume outlives the overlay').toBeUndefined();
    const loader = must(named(prepare, 'Pod', 'ollama-models-loader'), 'loader pod');
    expect(arr(podSpec(loader).volumes).map(obj).find((v) => v.name === 'models')?.persistentVolumeClaim).toEqual({ claimName: 'ollama-models' });
    expect(obj(podSpec(loader).securityContext).runAsUser).toBe(obj(spec.securityContext).runAsUser);
    expect(value(containerOf(gpu, 'check-model'), 'OLLAMA_MODELS')).toBe(value(ollama, 'OLLAMA_MODELS'));
  });

  it('scales on the extractor-gpu queue with KEDA, reading BullMQ lists under the configured prefix', () => {
    const so = must(named(gpu, 'ScaledObject', 'extractor-gpu'), 'ScaledObject');
    expect(obj(obj(so.spec).scaleTargetRef).name).toBe('extractor-gpu');
    const lists = arr(obj(so.spec).triggers).map(obj).map((t) => [t.type, t.name, obj(t.metadata).listName]);
    expect(lists).toEqual([
      ['redis', 'wait', `${prefix}:${QUEUES.extractorGpu}:wait`],
      ['redis', 'active', `${prefix}:${QUEUES.extractorGpu}:active`],
    ]);
    expect(obj(obj(so.spec).advanced).scalingModifiers).toEqual({ formula: 'wait + active', target: '1', activationTarget: '0', metricType: 'AverageValue' });
  });
});
