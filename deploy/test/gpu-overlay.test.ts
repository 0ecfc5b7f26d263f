// The gpu overlay, rendered by kustomize and checked against the Kubernetes
// schemas (kubernetes-models, and @kubernetes-models/keda for the
// ScaledObject: JSON schemas shipped in the npm packages, no network), then
// held to the extractor's GPU rules.
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import * as core from 'kubernetes-models/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { QUEUES } from '@vouch/contracts';

type Obj = Record<string, unknown>;
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

type Validatable = new (data: Obj) => { validate(): void };
function modelFor(doc: Obj): Validatable | undefined {
  const kind = String(doc.kind);
  const group = String(doc.apiVersion);
  const table: Record<string, Record<string, unknown>> = { v1: core, 'apps/v1': apps, 'keda.sh/v1alpha1': keda };
  return table[group]?.[kind] as Validatable | undefined;
}

const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const named = (docs: Obj[], kind: string, name: string) => docs.find((d) => d.kind === kind && obj(d.metadata).name === name);

describe.each(['deploy/k8s/base', 'deploy/k8s/overlays/gpu'])('%s rendered by kustomize', (dir) => {
  const docs = render(dir);

  it('is valid against the Kubernetes (and KEDA) schemas, every object in the vouch namespace', () => {
    const problems: string[] = [];
    for (const doc of docs) {
      const Model = modelFor(doc);
      const name = `${String(doc.kind)}/${String(obj(doc.metadata).name)}`;
      if (!Model) {
        problems.push(`${name}: no schema for ${String(doc.apiVersion)} ${String(doc.kind)}`);
        continue;
      }
      try {
        new Model(doc).validate();
      } catch (err) {
        problems.push(`${name}: ${(err as Error).message}`);
      }
      if (doc.kind !== 'Namespace') expect(obj(doc.metadata).namespace, name).toBe('vouch');
    }
    expect(problems).toEqual([]);
  });

  it('catches an invalid object (the validation is real)', () => {
    const dep = structuredClone(docs.find((d) => d.kind === 'Deployment')!);
    (obj(dep.spec) as Obj).replicas = 'two';
    expect(() => new apps.Deployment(dep).validate()).toThrow(/replicas must be integer/);
  });
});

describe('the gpu overlay runs gated LLM extraction on approved GPU nodes', () => {
  const docs = render('deploy/k8s/overlays/gpu');
  const dep = named(docs, 'Deployment', 'extractor-gpu');
  const spec = obj(obj(obj(dep?.spec).template).spec);
  const containers = arr(spec.containers).map(obj);
  const extractor = containers.find((c) => c.name === 'extractor')!;
  const ollama = containers.find((c) => c.name === 'ollama')!;
  const env = (c: Obj) => new Map(arr(c.env).map(obj).map((e) => [String(e.name), e]));
  const fromConfig = (c: Obj, name: string) => obj(obj(env(c).get(name)?.valueFrom).configMapKeyRef);
  const value = (c: Obj, name: string) => env(c).get(name)?.value as string | undefined;

  it('keeps the CPU extractor of the base and adds the GPU Deployment with an Ollama sidecar', () => {
    expect(named(docs, 'Deployment', 'extractor')).toBeDefined();
    expect(dep).toBeDefined();
    expect(containers.map((c) => c.name)).toEqual(['extractor', 'ollama']);
  });

  it('places it on GPU nodes: node selector, toleration, one nvidia.com/gpu', () => {
    expect(obj(spec.nodeSelector)['nvidia.com/gpu.present']).toBe('true');
    expect(arr(spec.tolerations).map(obj)).toContainEqual(expect.objectContaining({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }));
    expect(obj(obj(ollama.resources).limits)['nvidia.com/gpu']).toBe(1);
  });

  it('takes the allowlist and CUDA_VISIBLE_DEVICES from config, the sidecar and the gate from the same key', () => {
    const cm = docs.find((d) => d.kind === 'ConfigMap' && String(obj(d.metadata).name).startsWith('extractor-gpu'));
    const cmName = String(obj(cm?.metadata).name);
    expect(fromConfig(extractor, 'EXTRACTOR_APPROVED_GPU_UUIDS')).toEqual({ name: cmName, key: 'EXTRACTOR_APPROVED_GPU_UUIDS' });
    expect(fromConfig(ollama, 'CUDA_VISIBLE_DEVICES')).toEqual({ name: cmName, key: 'CUDA_VISIBLE_DEVICES' });
    expect(fromConfig(extractor, 'OLLAMA_CUDA_VISIBLE_DEVICES')).toEqual({ name: cmName, key: 'CUDA_VISIBLE_DEVICES' });
    expect(obj(cm?.data).CUDA_VISIBLE_DEVICES).toMatch(/^GPU-[0-9a-f-]{36}$/);
    expect(value(extractor, 'EXTRACTOR_LLM_ENABLED')).toBe('true');
    expect(value(extractor, 'OLLAMA_HOST')).toBe('http://127.0.0.1:11434');
  });

  it('is ready only through /readyz (the GPU gate), one job per GPU, a lock above the longest generation', () => {
    expect(obj(obj(extractor.readinessProbe).httpGet).path).toBe('/readyz');
    expect(value(extractor, 'EXTRACTOR_GPU_CONCURRENCY')).toBe('1');
    expect(Number(value(extractor, 'EXTRACTOR_LLM_LOCK_MS'))).toBeGreaterThan(Number(value(extractor, 'EXTRACTOR_LLM_TIMEOUT_MS')));
    expect(Number(spec.terminationGracePeriodSeconds)).toBeGreaterThan((25_000 + Number(value(extractor, 'EXTRACTOR_LLM_TIMEOUT_MS'))) / 1000);
    expect(Number(obj(dep?.spec).replicas)).toBeLessThanOrEqual(Number(obj(named(docs, 'ScaledObject', 'extractor-gpu')?.spec).maxReplicaCount));
  });

  it('scales on the extractor-gpu queue with KEDA, reading BullMQ lists under the configured prefix', () => {
    const so = named(docs, 'ScaledObject', 'extractor-gpu');
    expect(obj(obj(so?.spec).scaleTargetRef).name).toBe('extractor-gpu');
    const prefix = String(obj(named(docs, 'ConfigMap', 'vouch-config')?.data).BULLMQ_PREFIX);
    const lists = arr(obj(so?.spec).triggers).map(obj).map((t) => [t.type, obj(t.metadata).listName]);
    expect(lists).toEqual([
      ['redis', `${prefix}:${QUEUES.extractorGpu}:wait`],
      ['redis', `${prefix}:${QUEUES.extractorGpu}:active`],
    ]);
  });
});
