import type { NextFunction, Request, Response } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Request count and latency by route template (never the raw URL, which would explode the label set). */
export function httpMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'vouch_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'vouch_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route template.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const stop = duration.startTimer();
    res.on('finish', () => {
      const route = (res.locals.routeTemplate as string | undefined) ?? 'unmatched';
      stop({ method: req.method, route });
      requests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
