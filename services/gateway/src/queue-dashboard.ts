import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { ERROR_CODES, type ErrorBody } from '@vouch/contracts';
import type { QueueHub } from '@vouch/platform';
import { isOperator, type Caller } from './api-keys.js';
import { errorBodyOf, problemFromBody, sendProblem } from './problem.js';

export const DASHBOARD_PATH = '/admin/queues';

/**
 * The operator's credential from a request: a bearer key, or the password of
 * HTTP Basic auth (any user name), so a browser can open the dashboard with
 * its own login prompt.
 */
function presentedKey(req: Request): string | undefined {
  const header = req.get('Authorization') ?? '';
  const bearer = /^Bearer\s+(\S+)$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}

/**
 * The BullMQ dashboard (bull-board) over every service queue. It shows every
 * tenant's job payloads, so it opens only to operator keys (`npm run keys --
 * create --operator`), which no tenant key is, whatever its scopes. It is
 * read-only unless `writable`: bull-board's read-only mode refuses changes,
 * and every method but GET and HEAD is refused here first, so no adapter
 * route can pause, clean, obliterate or add a forged job.
 */
export function queueDashboard(deps: { authenticate(key: string): Promise<Caller | undefined>; hub: QueueHub; dashboardWritable?: boolean }): Router {
  const writable = deps.dashboardWritable ?? false;
  const board = new ExpressAdapter();
  board.setBasePath(DASHBOARD_PATH);
  createBullBoard({ queues: deps.hub.all().map((q) => new BullMQAdapter(q, { readOnlyMode: !writable })), serverAdapter: board });

  const problem = (req: Request, res: Response, body: ErrorBody) =>
    sendProblem(res, problemFromBody(body, { instance: req.originalUrl, requestId: res.locals.requestId as string }));

  const router = Router();
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const key = presentedKey(req);
    if (!key) {
      res.setHeader('WWW-Authenticate', 'Basic realm="vouch operators", charset="UTF-8"');
      return problem(req, res, { code: ERROR_CODES.unauthenticated, message: 'the queue dashboard needs an operator key (Bearer, or as the Basic auth password): create one with `npm run keys -- create --operator`' });
    }
    let caller;
    try {
      caller = await deps.authenticate(key);
    } catch (err) {
      return problem(req, res, errorBodyOf(err));
    }
    if (!caller) return problem(req, res, { code: ERROR_CODES.unauthenticated, message: 'this key is unknown or revoked: create an operator key with `npm run keys -- create --operator`' });
    if (!isOperator(caller)) {
      return problem(req, res, { code: ERROR_CODES.forbidden, message: 'the queue dashboard shows every tenant\'s jobs, so it opens only to operator keys, not tenant keys: create one with `npm run keys -- create --operator`' });
    }
    if (!writable && req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return problem(req, res, { code: ERROR_CODES.forbidden, message: 'the queue dashboard is read-only: set DASHBOARD_WRITABLE=true on the gateway to let operators change queues' });
    }
    next();
  });
  router.use(board.getRouter());
  return router;
}
