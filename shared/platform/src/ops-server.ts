import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { checkReadiness, type ReadinessCheck } from './health.js';
import type { Logger } from './logger.js';

/** A service's small HTTP server: /livez, /readyz and /metrics. */
export interface OpsServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/**
 * Where a process is in its life, as /readyz reports it: `starting` (with
 * what it waits for) and `stopping` answer 503 without running the checks,
 * so a load balancer or Kubernetes sends it nothing while it cannot serve.
 */
export type Phase = { phase: 'starting'; waitingFor: string } | { phase: 'running' } | { phase: 'stopping' };

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Starts the ops server. /livez answers while the event loop runs, from the
 * first moment of a start (a service waiting for Redis or for another
 * replica's migrations is alive, not stuck); /readyz answers 200 only when the
 * phase is `running` and every check passes (Redis and Postgres reachable,
 * migrations applied); /metrics is the registry in Prometheus text format.
 * `checks` is read at each request, so a service may add checks as it starts.
 */
export async function startOpsServer(opts: {
  port: number;
  host?: string;
  registry: Registry;
  checks: readonly ReadinessCheck[];
  logger: Logger;
  /** Defaults to always running. */
  phase?: () => Phase;
}): Promise<OpsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'method not allowed\n');
    if (path === '/livez') return send(res, 200, 'application/json', '{"status":"live"}\n');
    if (path === '/readyz') {
      const phase = opts.phase?.() ?? { phase: 'running' };
      if (phase.phase === 'starting') return send(res, 503, 'application/json', `${JSON.stringify({ status: 'starting', waitingFor: phase.waitingFor })}\n`);
      if (phase.phase === 'stopping') return send(res, 503, 'application/json', '{"status":"stopping"}\n');
      void checkReadiness(opts.checks).then((report) => send(res, report.ready ? 200 : 503, 'application/json', `${JSON.stringify({ status: report.ready ? 'ready' : 'not ready', checks: report.checks, ...(report.details ? { details: report.details } : {}) })}\n`));
      return;
    }
    if (path === '/metrics') {
      void opts.registry.metrics().then(
        (text) => send(res, 200, opts.registry.contentType, text),
        (err: unknown) => {
          opts.logger.error({ err }, 'metrics collection failed');
          send(res, 500, 'text/plain', 'metrics collection failed\n');
        },
      );
      return;
    }
    send(res, 404, 'text/plain', 'not found: try /livez, /readyz or /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
