import WebSocket from 'ws';
import type { TsProcess } from './child-process.js';

/**
 * Node's inspector, reached from outside a process over the Chrome DevTools
 * Protocol: a test that spawned a process with `INSPECT_ARGS` can make it
 * run a full garbage collection now.
 *
 * Why: once a flood is over, V8 gives its heap back on its own schedule (its
 * memory reducer waits for the process to look idle, then collects over some
 * seconds; on a busy machine that took past 45 s). A test that waits for it
 * measures V8's scheduling and the machine's load. After a forced full
 * collection, what is still resident is what the code still holds (a
 * reference kept, a cache past its bound) or what the allocator kept
 * (glibc heaps fragmented by large buffers, see MALLOC_ENV): the failures
 * a memory test is there to find.
 */

/** Node arguments that open the inspector on a port of the system's choosing, on loopback only. */
export const INSPECT_ARGS = ['--inspect=127.0.0.1:0'] as const;

/** The inspector's WebSocket URL, from the line Node writes to stderr when it starts listening. */
export function inspectorUrl(child: TsProcess): string {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(child.stderr())?.[1];
  if (!url) throw new Error(`no inspector URL on the process's stderr: spawn it with INSPECT_ARGS (${INSPECT_ARGS.join(' ')}); stderr: ${child.stderr().slice(-500)}`);
  return url;
}

/** Sends one protocol command and resolves with its result; rejects on a protocol error or after `timeoutMs`. */
async function command(url: string, method: string, timeoutMs: number): Promise<unknown> {
  const socket = new WebSocket(url);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method} got no answer within ${timeoutMs} ms from ${url}`)), timeoutMs);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.on('message', (data: Buffer) => {
        const reply = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
        if (reply.id !== 1) return; // an event, not our answer
        clearTimeout(timer);
        if (reply.error) reject(new Error(`${method}: ${reply.error.message}`));
        else resolve(reply.result);
      });
      socket.once('open', () => socket.send(JSON.stringify({ id: 1, method })));
    });
  } finally {
    // A client left attached would hold the process open at exit ("Waiting for the debugger to disconnect").
    socket.terminate();
  }
}

/** Runs a full garbage collection in `child` (spawned with INSPECT_ARGS) and resolves once it is done. */
export async function collectGarbage(child: TsProcess, timeoutMs = 20_000): Promise<void> {
  await command(inspectorUrl(child), 'HeapProfiler.collectGarbage', timeoutMs);
}
