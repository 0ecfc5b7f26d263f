import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import { ERROR_CODES, OPERATIONS, buildOpenApiDocument, buildToolManifest, gatewayOperations, type OperationDef } from '@vouch/contracts';
import { assertHandlersComplete, checkReadiness, type Logger, type Pool, type QueueHub, type ReadinessCheck } from '@vouch/platform';
import type { Registry } from 'prom-client';
import type { Caller } from './api-keys.js';
import { ByteBudget, bodyBudget } from './body-budget.js';
import type { ClaimWaits } from './claim-waits.js';
import type { GatewayHandler } from './gateway-handler.js';
import { httpMetrics } from './http-metrics.js';
import { JSON_TYPES, requireUtf8Json } from './json-body.js';
import { MCP_PATH } from './mcp-server.js';
import { mcpRouter } from './mcp-route.js';
import { operationRoute } from './operation-route.js';
import { DASHBOARD_PATH, queueDashboard } from './queue-dashboard.js';
import { errorBodyOf, problemFromBody, sendProblem } from './problem.js';

import type { TenantBudgets } from './tenant-budgets.js';
import { undecodablePathParams } from './request-text.js';

export interface AppDeps {
  pool: Pool;
  /** The caller a bearer key belongs to (through the key cache), or undefined. */
  authenticate(key: string): Promise<Caller | undefined>;
  hub: QueueHub;
  /** Where waiting board.claimCard requests wait (not in a board-dispatcher job). */
  claimWaits: ClaimWaits;
  /** Every tenant's rate and concurrency budgets (tenant-budgets.ts). */
  budgets: TenantBudgets;
  /** The most pixels an image's cost counts (MEDIA_MAX_PIXELS). */
  maxImagePixels: number;
  logger: Logger;
  registry: Registry;
  version: string;
  handlers: readonly GatewayHandler[];
  readiness: readonly ReadinessCheck[];
  /** Largest JSON body accepted, in bytes. */
  bodyLimitBytes: number;
  /** Whether operators may change queues from the dashboard (pause, retry, clean, add); read-only otherwise. */
  dashboardWritable?: boolean;
  /** Bytes of request bodies held at once; past it a large body is refused 503 (BODY_BUDGET_BYTES). */
  bodyBudgetBytes: number;
  /** Bytes of request bodies one tenant holds at once; past it its large body is refused 429 (BODY_BUDGET_TENANT_BYTES). The whole budget when unset. */
  bodyBudgetTenantBytes?: number;
  operations?: readonly OperationDef[];
  /** Whether the gateway listens on loopback only: /mcp then refuses non-loopback Host and Origin headers. */
  loopbackOnly?: boolean;
}

const BEARER = /^Bearer\s+(\S+)$/i;

/** The tenant of a request past authentication: /v1 keeps its caller in res.locals, /mcp in the SDK's AuthInfo. */
function authenticatedTenant(req: Request, res: Response): string {
  const caller = (res.locals.caller ?? (req as Request & { auth?: { extra?: { caller?: Caller } } }).auth?.extra?.caller) as Caller | undefined;
  if (!caller) throw new Error('the body budget runs after authentication: no caller on this request');
  return caller.tenant;
}

const UNLOGGED = new Set(['/livez', '/readyz', '/metrics']);

/**
 * One log line per answer. At `info` and below that is pino-http's line for
 * every request; above it (`warn`, the usual production level under load)
 * only problem answers are logged, from a listener on the response, so a
 * request whose line would be dropped allocates no child logger.
 */
function accessLog(logger: Logger) {
  if (logger.isLevelEnabled('info')) {
    return pinoHttp({
      logger,
      genReqId: (_req, res) => (res as Response).locals.requestId as string,
      autoLogging: { ignore: (req) => UNLOGGED.has(req.url ?? '') },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    });
  }
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    res.on('finish', () => {
      if (res.statusCode < 400 || !logger.isLevelEnabled(res.statusCode >= 500 ? 'error' : 'warn')) return;
      const line = { requestId: res.locals.requestId as string, req: { method: req.method, url: req.originalUrl }, res: { statusCode: res.statusCode }, responseTime: Math.round(performance.now() - started) };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger.warn(line, 'request refused');
    });
    next();
  };
}

/**
 * The gateway's express app. Every /v1 route but the OpenAPI document and the
 * tool manifest is derived from the operation table and requires a bearer key.
 */
export function createApp(deps: AppDeps): express.Express {
  const operations = deps.operations ?? OPERATIONS;
  assertHandlersComplete('gateway', gatewayOperations(operations), deps.handlers);
  const gatewayHandlers = new Map(deps.handlers.map((h) => [h.operation.name, h]));
  const openapi = buildOpenApiDocument(operations, { version: deps.version });
  const tools = buildToolManifest(operations);
  const callDeps = { pool: deps.pool, hub: deps.hub, claimWaits: deps.claimWaits, budgets: deps.budgets, maxImagePixels: deps.maxImagePixels, gatewayHandlers, logger: deps.logger };

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // API answers are never revalidated; Express would otherwise hash every body for a weak ETag.
  app.set('etag', false);
  app.use((req, res, next) => {
    const given = req.get('X-Request-Id');
    res.locals.requestId = given && /^[\x21-\x7e]{1,100}$/.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', res.locals.requestId as string);
    next();
  });
  app.use(httpMetrics(deps.registry));
  app.use(accessLog(deps.logger));

  const route = (template: string) => (_req: Request, res: Response, next: NextFunction) => {
    res.locals.routeTemplate = template;
    next();
  };

  app.get('/livez', route('/livez'), (_req, res) => void res.json({ status: 'live' }));
  app.get('/readyz', route('/readyz'), async (_req, res) => {
    const report = await checkReadiness(deps.readiness);
    res.status(report.ready ? 200 : 503).json({ status: report.ready ? 'ready' : 'not ready', checks: report.checks });
  });
  app.get('/metrics', route('/metrics'), async (_req, res) => {
    res.type(deps.registry.contentType).send(await deps.registry.metrics());
  });
  app.get('/v1/openapi.json', route('/v1/openapi.json'), (_req, res) => void res.json(openapi));
  app.get('/v1/tools', route('/v1/tools'), (_req, res) => void res.json({ tools }));

  const authenticate = async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('Authorization');
    const match = header ? BEARER.exec(header) : null;
    const problem = (message: string) =>
      sendProblem(res, problemFromBody({ code: ERROR_CODES.unauthenticated, message }, { instance: req.originalUrl, requestId: res.locals.requestId as string }));
    if (!match) return problem('send an API key as Authorization: Bearer <key>; create one with `npm run keys -- create --tenant NAME`');
    let caller: Caller | undefined;
    try {
      caller = await deps.authenticate(match[1]!);
    } catch (err) {
      return sendProblem(res, problemFromBody(errorBodyOf(err), { instance: req.originalUrl, requestId: res.locals.requestId as string }));
    }
    if (!caller) return problem('this API key is unknown or revoked: create a new one with `npm run keys -- create --tenant NAME`');
    res.locals.caller = caller;
    next();
  };

  // One body parser, one limit and one budget for every door that takes a JSON
  // body (/v1 and /mcp): 20 parallel 8 MB calls over /mcp, outside the budget,
  // took the gateway from 184 to 964 MB RSS. The charset first, so a body that
  // will be refused takes nothing from the budget.
  // Each tenant may hold only its share of the budget, so one tenant's large
  // bodies cannot take the gateway's memory, or its event loop, from the rest.
  const json = [requireUtf8Json, bodyBudget(express.json({ limit: deps.bodyLimitBytes, type: JSON_TYPES }), {
    budget: new ByteBudget(deps.bodyBudgetBytes),
    tenantShare: deps.bodyBudgetTenantBytes ?? deps.bodyBudgetBytes,
    tenantOf: authenticatedTenant,
    maxBody: deps.bodyLimitBytes,
    registry: deps.registry,
  })];

  app.use(DASHBOARD_PATH, route(DASHBOARD_PATH), queueDashboard(deps));
  app.use(
    MCP_PATH,
    route(MCP_PATH),
    mcpRouter({ ...callDeps, operations, authenticate: deps.authenticate, version: deps.version, bodyLimitBytes: deps.bodyLimitBytes, readBody: json, loopbackOnly: deps.loopbackOnly ?? false }),
  );

  for (const op of operations) {
    const method = op.http.method.toLowerCase() as 'get' | 'post' | 'delete';
    app[method](op.http.path, route(op.http.path), authenticate, json, operationRoute(op, callDeps));
  }

  app.use((req, res) => {
    sendProblem(
      res,
      problemFromBody(
        { code: ERROR_CODES.notFound, message: `no route ${req.method} ${req.path}: the routes are listed in /v1/openapi.json` },
        { instance: req.originalUrl, requestId: res.locals.requestId as string },
      ),
    );
  });

  // Body parser failures and anything a route threw: always a problem document, never a crash.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number; message?: string; limit?: number };
    let body = errorBodyOf(err);
    if (e?.type === 'entity.too.large') body = { code: ERROR_CODES.payloadTooLarge, message: `the request body is larger than ${deps.bodyLimitBytes} bytes: send a smaller image or payload` };
    else if (e?.type === 'entity.parse.failed') body = { code: ERROR_CODES.badInput, message: `the body is not valid JSON (${e.message}): send a JSON object`, fields: [{ path: '(body)', message: 'malformed JSON' }] };
    else if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') body = { code: ERROR_CODES.unsupportedMediaType, message: `${e.message}: send UTF-8 JSON` };
    else if (e?.status === 400 && /^Failed to decode param/.test(e.message ?? '')) {
      // The router refuses a path parameter that is not UTF-8 before any route runs, without its name.
      const fields = undecodablePathParams(operations, req.method, req.path);
      body = { code: ERROR_CODES.badInput, message: `the path holds text that is not valid percent-encoded UTF-8${fields.length ? ` (${fields.map((f) => f.path).join(', ')})` : ''}: encode it as UTF-8`, fields: fields.length ? fields : [{ path: '(path)', message: 'not valid percent-encoded UTF-8' }] };
    } else if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) body = { code: ERROR_CODES.badInput, message: e.message ?? 'bad request' };
    if (body.code === ERROR_CODES.internal) deps.logger.error({ err, url: req.originalUrl }, 'unhandled error');
    if (res.headersSent) return;
    sendProblem(res, problemFromBody(body, { instance: req.originalUrl, requestId: res.locals.requestId as string }));
  });
  return app;
}

