/**
 * A Redis primary, one replica and three sentinels on loopback ports, each a
 * redis-server process of its own with its files in a temp dir, for tests
 * that kill the primary and watch the stack follow the failover.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { closedPort, eventually } from '@vouch/testing';

export const SENTINEL_GROUP = 'vouchtest';

export interface SentinelSetup {
  primaryPort: number;
  replicaPort: number;
  sentinelPorts: number[];
  /** REDIS_SENTINELS for the stack. */
  sentinelsVar: string;
  /** SIGKILLs the primary's process now. */
  killPrimary(): void;
  /** Starts the killed primary again on its port; resolves once the sentinels have made it an in-sync replica. */
  restartOldPrimaryAsReplica(): Promise<void>;
  /** SENTINEL FAILOVER: the replica is promoted and the old primary, still running, demoted. */
  failover(): Promise<void>;
  /** The primary's port as the sentinels name it now. */
  currentPrimaryPort(): Promise<number>;
  stop(): Promise<void>;
}

const DOWN_AFTER_MS = 1_000;

/** Starts the five servers; resolves once every sentinel knows the replica and the two other sentinels. */
export async function startSentinelSetup(): Promise<SentinelSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'vouch-sentinel-'));
  const procs: ChildProcess[] = [];
  const output = new Map<ChildProcess, string>();
  const start = (name: string, args: string[]) => {
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    output.set(child, '');
    const keep = (chunk: Buffer) => output.set(child, (output.get(child)! + chunk.toString()).slice(-4_000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('error', (err) => output.set(child, `${output.get(child)!}\n${name}: ${String(err)} (is redis-server installed?)`));
    procs.push(child);
    return child;
  };
  const stop = async () => {
    const alive = procs.filter((p) => p.exitCode === null && p.signalCode === null);
    for (const p of alive) p.kill('SIGKILL');
    await Promise.all(alive.map((p) => new Promise((resolve) => p.once('exit', resolve))));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const primaryPort = await closedPort();
    const replicaPort = await closedPort();
    const sentinelPorts = [await closedPort(), await closedPort(), await closedPort()];
    // No persistence: the replica's copy is all that survives the primary, as with a managed pair.
    const node = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', `dump-${port}.rdb`];
    let primary = start('primary', node(primaryPort));
    start('replica', [...node(replicaPort), '--replicaof', '127.0.0.1', String(primaryPort)]);
    for (const port of sentinelPorts) {
      const conf = join(dir, `sentinel-${port}.conf`);
      // Sentinel rewrites its own file (what it learns), so each has one it can write.
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${SENTINEL_GROUP} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_GROUP} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${SENTINEL_GROUP} 10000`,
          `sentinel parallel-syncs ${SENTINEL_GROUP} 1`,
          '',
        ].join('\n'),
      );
      start(`sentinel ${port}`, [conf, '--sentinel']);
    }

    const ask = async <T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> => {
      const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: true });
      r.on('error', () => {});
      try {
        await r.connect();
        return await fn(r);
      } finally {
        r.disconnect();
      }
    };
    await eventually(
      'the replica in sync and every sentinel to know the replica and the other two',
      async () => {
        for (const p of procs) if (p.exitCode !== null) throw new Error(`a redis-server exited at start: ${output.get(p)}`);
        const info = await ask(replicaPort, (r) => r.info('replication')).catch(() => '');
        if (!info.includes('master_link_status:up')) return undefined;
        for (const port of sentinelPorts) {
          const fields = await ask(port, (r) => r.call('SENTINEL', 'MASTER', SENTINEL_GROUP) as Promise<string[]>).catch((): string[] => []);
          const at = (f: string) => fields[fields.indexOf(f) + 1];
          if (at('num-slaves') !== '1' || at('num-other-sentinels') !== '2') return undefined;
        }
        return true;
      },
      30_000,
      200,
    );
    return {
      primaryPort,
      replicaPort,
      sentinelPorts,
      sentinelsVar: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
      killPrimary: () => primary.kill('SIGKILL'),
      restartOldPrimaryAsReplica: async () => {
        primary = start('old primary', node(primaryPort));
        await eventually(
          'the old primary to rejoin as an in-sync replica the sentinels see',
          async () => {
            const info = await ask(primaryPort, (r) => r.info('replication')).catch(() => '');
            if (!info.includes('role:slave') || !info.includes('master_link_status:up')) return undefined;
            for (const port of sentinelPorts) {
              const replicas = await ask(port, (r) => r.call('SENTINEL', 'REPLICAS', SENTINEL_GROUP) as Promise<string[][]>).catch((): string[][] => []);
              const it = replicas.find((fields) => fields[fields.indexOf('port') + 1] === String(primaryPort));
              if (!it || /s_down|o_down|disconnected/.test(it[it.indexOf('flags') + 1] ?? '')) return undefined;
            }
            return true;
          },
          60_000,
          200,
        );
      },
      failover: async () => {
        await ask(sentinelPorts[0]!, (r) => r.call('SENTINEL', 'FAILOVER', SENTINEL_GROUP));
      },
      currentPrimaryPort: async () => {
        for (const port of sentinelPorts) {
          const addr = await ask(port, (r) => r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_GROUP) as Promise<[string, string]>).catch(() => undefined);
          if (addr) return Number(addr[1]);
        }
        throw new Error('no sentinel answered');
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
