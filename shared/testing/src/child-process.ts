import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A TypeScript entry point running in its own Node process, as a deployed service would. */
export interface TsProcess {
  proc: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  /** Resolves with the first stdout line starting with `prefix` (already seen or still to come). */
  waitFor(prefix: string, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (null when a signal killed it). */
  exited: Promise<number | null>;
  /** Everything written to stderr so far. */
  stderr(): string;
}

/**
 * Starts `script` with tsx under the `@vouch/source` condition, so workspace
 * packages load from source like in tests. Crash and shutdown tests use it to
 * SIGKILL or SIGTERM a real process. `nodeArgs` go to node itself (e.g.
 * `--cpu-prof`, which NODE_OPTIONS does not take).
 */
export function spawnTsProcess(script: string, env: Record<string, string> = {}, nodeArgs: readonly string[] = []): TsProcess {
  const proc = spawn(process.execPath, [...nodeArgs, '--conditions=@vouch/source', '--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: Array<{ prefix: string; resolve: (line: string) => void }> = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (line.startsWith(w.prefix)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return {
    proc,
    lines,
    exited,
    stderr: () => stderr,
    waitFor(prefix, timeoutMs = 20_000) {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${prefix}" line within ${timeoutMs} ms; stdout: ${lines.join(' | ')}; stderr: ${stderr}`)), timeoutMs);
        waiters.push({
          prefix,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}

/** The processes a test file starts, so that none outlives its test: call `killAll` after each. */
export class TsProcesses {
  readonly #started: TsProcess[] = [];

  spawn(script: string, env: Record<string, string> = {}, nodeArgs: readonly string[] = []): TsProcess {
    const child = spawnTsProcess(script, env, nodeArgs);
    this.#started.push(child);
    return child;
  }

  /** SIGKILLs those still running, and waits until they are gone. */
  async killAll(): Promise<void> {
    const alive = this.#started.splice(0).filter((c) => c.proc.exitCode === null && c.proc.signalCode === null);
    for (const c of alive) c.proc.kill('SIGKILL');
    await Promise.all(alive.map((c) => c.exited));
  }
}

/** Polls `probe` until it returns a value other than undefined, or fails naming `what`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
