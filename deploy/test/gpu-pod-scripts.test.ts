// The shell scripts of the GPU pod (deploy/k8s/overlays/gpu/scripts), run
// with /bin/sh against fake nvidia-smi, ollama and node programs: the sidecar
// publishes the one GPU the device plugin gave it and pins Ollama to it, the
// extractor's gate gets that GPU, nvidia-smi is held to it, and a pod whose
// model is not in the volume stops at its init step, saying what is missing.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const scripts = resolve(dirname(fileURLToPath(import.meta.url)), '../k8s/overlays/gpu/scripts');
const work = mkdtempSync(join(tmpdir(), 'vouch-gpu-scripts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const H200 = 'GPU-3f1c0a52-8d6e-4b7a-9c21-5e0f6a7b8c9d';
const OTHER = 'GPU-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

let runs = 0;
/** Runs a script with fake programs first on PATH; `programs` maps a name to its sh body. */
function run(script: string, programs: Record<string, string>, env: Record<string, string> = {}) {
  const dir = join(work, `run-${++runs}`);
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const [name, body] of Object.entries(programs)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  const published = join(dir, 'uuid');
  const r = spawnSync('/bin/sh', [join(scripts, script)], {
    encoding: 'utf8',
    cwd: dir,
    env: { PATH: `${bin}:/usr/bin:/bin`, VOUCH_GPU_FILE: published, ...env },
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, published, dir };
}

describe('start-ollama.sh', () => {
  const ollama = 'echo "serve on CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES args=$*"';

  it('publishes the one GPU the container sees and runs ollama serve pinned to it by UUID', () => {
    const r = run('start-ollama.sh', { 'nvidia-smi': `[ "$*" = "--query-gpu=uuid --format=csv,noheader" ] || exit 2\necho "${H200}"`, ollama });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`serve on CUDA_VISIBLE_DEVICES=${H200} args=serve`);
    expect(readFileSync(r.published, 'utf8')).toBe(`${H200}\n`);
  });

  it('refuses to start Ollama on a container that sees two GPUs, or none', () => {
    for (const listed of [`echo "${H200}"; echo "${OTHER}"`, 'true']) {
      const r = run('start-ollama.sh', { 'nvidia-smi': listed, ollama });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/sees [02] GPUs .*not the one nvidia\.com\/gpu the device plugin allocated/s);
      expect(r.stdout).not.toContain('serve on');
      expect(existsSync(r.published)).toBe(false);
    }
  });

  it('stops when nvidia-smi fails (no NVIDIA runtime in the pod)', () => {
    const r = run('start-ollama.sh', { 'nvidia-smi': 'echo "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver" >&2; exit 9', ollama });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/nvidia-smi failed in the Ollama container .*could not communicate.*runtimeClassName nvidia/s);
    expect(existsSync(r.published)).toBe(false);
  });
});

describe('start-extractor.sh', () => {
  it('hands the published GPU to the gate as OLLAMA_CUDA_VISIBLE_DEVICES and runs the service', () => {
    const dir = join(work, 'published');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'uuid'), `${H200}\n`);
    const r = run('start-extractor.sh', { node: 'echo "node $* gate=$OLLAMA_CUDA_VISIBLE_DEVICES"' }, { VOUCH_GPU_FILE: join(dir, 'uuid') });
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(`node services/extractor/dist/main.js gate=${H200}`);
  });
});

describe('pod-nvidia-smi.sh', () => {
  it("holds every query of the gate to the pod's GPU", () => {
    const dir = join(work, 'smi');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'uuid'), `${H200}\n`);
    const r = run('pod-nvidia-smi.sh', { 'nvidia-smi': 'echo "$*"' }, { VOUCH_GPU_FILE: join(dir, 'uuid') });
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(`-i ${H200}`);
    const q = spawnSync('/bin/sh', [join(scripts, 'pod-nvidia-smi.sh'), '--query-compute-apps=pid,gpu_uuid,used_memory', '--format=csv'], {
      encoding: 'utf8',
      env: { PATH: `${join(r.dir, 'bin')}:/usr/bin:/bin`, VOUCH_GPU_FILE: join(dir, 'uuid') },
    });
    expect(q.stdout.trim()).toBe(`-i ${H200} --query-compute-apps=pid,gpu_uuid,used_memory --format=csv`);
  });

  it('fails as "no such device" (exit 6) before the sidecar published a GPU', () => {
    const r = run('pod-nvidia-smi.sh', { 'nvidia-smi': 'echo ran' });
    expect(r.status).toBe(6);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/published no GPU/);
  });
});

describe('check-model.sh', () => {
  const digest = (c: string) => c.repeat(64);
  /** An Ollama model store holding one model's manifest and the blobs named in `blobs`. */
  function store(path: string, tag: string, blobs: string[]) {
    const models = join(work, `models-${++runs}`);
    const manifest = { schemaVersion: 2, config: { digest: `sha256:${digest('a')}` }, layers: [{ digest: `sha256:${digest('b')}` }, { digest: `sha256:${digest('c')}` }] };
    mkdirSync(join(models, 'manifests', path), { recursive: true });
    writeFileSync(join(models, 'manifests', path, tag), JSON.stringify(manifest));
    mkdirSync(join(models, 'blobs'), { recursive: true });
    for (const b of blobs) writeFileSync(join(models, 'blobs', `sha256-${digest(b)}`), 'x');
    return models;
  }

  it.each([
    ['qwen2.5:7b-instruct', 'registry.ollama.ai/library/qwen2.5', '7b-instruct'],
    ['qwen2.5', 'registry.ollama.ai/library/qwen2.5', 'latest'],
    ['team/extract-model:v3', 'registry.ollama.ai/team/extract-model', 'v3'],
    ['models.internal/team/extract-model:v3', 'models.internal/team/extract-model', 'v3'],
  ])('finds %s with its manifest and every blob', (model, path, tag) => {
    const r = run('check-model.sh', {}, { EXTRACTOR_MODEL: model, OLLAMA_MODELS: store(path, tag, ['a', 'b', 'c']) });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`check-model: ${model} is in`);
  });

  it('stops the pod when the model is not in the volume, naming the manifest it looked for', () => {
    const r = run('check-model.sh', {}, { EXTRACTOR_MODEL: 'qwen2.5:14b-instruct', OLLAMA_MODELS: store('registry.ollama.ai/library/qwen2.5', '7b-instruct', ['a', 'b', 'c']) });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/qwen2\.5:14b-instruct is not in the ollama-models volume \(no .*manifests\/registry\.ollama\.ai\/library\/qwen2\.5\/14b-instruct\)/);
  });

  it('stops the pod when a blob is missing (an interrupted copy)', () => {
    const r = run('check-model.sh', {}, { EXTRACTOR_MODEL: 'qwen2.5:7b-instruct', OLLAMA_MODELS: store('registry.ollama.ai/library/qwen2.5', '7b-instruct', ['a', 'b']) });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`lists sha256:${digest('c')}, but`);
    expect(r.stderr).toContain('missing or empty');
  });
});
