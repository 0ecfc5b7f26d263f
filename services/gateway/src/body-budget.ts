import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ERROR_CODES } from '@vouch/contracts';
import { Counter, Gauge, type Registry } from 'prom-client';
import { problemFromBody, sendProblem } from './problem.js';

/** Bodies up to this size are not counted: every request but an image upload is one, and none should wait behind uploads. */
export const SMALL_BODY_BYTES = 64 * 1024;

/** Bytes held against a fixed budget. */
export class ByteBudget {
  #held = 0;

  constructor(readonly limit: number) {}

  get held(): number {
    return this.#held;
  }

  /** Takes `n` bytes if they fit, and says whether they did. */
  tryTake(n: number): boolean {
    if (this.#held + n > this.limit) return false;
    this.#held += n;
    return true;
  }

  give(n: number): void {
    this.#held -= n;
  }
}

/**
 * The body budget and each tenant's share of it: a body is admitted when it
 * fits both. Shares exist only while a tenant holds bytes.
 */
export class TenantByteBudgets {
  readonly #shares = new Map<string, ByteBudget>();

  constructor(
    readonly total: ByteBudget,
    readonly share: number,
  ) {}

  /** Takes `n` bytes for `tenant` if they fit, or says which budget is spent. */
  tryTake(tenant: string, n: number): 'total' | 'tenant' | undefined {
    if (this.total.held + n > this.total.limit) return 'total';
    const mine = this.#shares.get(tenant) ?? new ByteBudget(this.share);
    if (!mine.tryTake(n)) return 'tenant';
    this.#shares.set(tenant, mine);
    this.total.tryTake(n);
    return undefined;
  }

  give(tenant: string, n: number): void {
    this.total.give(n);
    const mine = this.#shares.get(tenant);
    if (!mine) return;
    mine.give(n);
    if (mine.held <= 0) this.#shares.delete(tenant);
  }

  /** Bytes `tenant` holds now. */
  heldBy(tenant: string): number {
    return this.#shares.get(tenant)?.held ?? 0;
  }
}

export interface BodyBudgetOptions {
  budget: ByteBudget;
  /** Bytes one tenant's bodies may hold at once (BODY_BUDGET_TENANT_BYTES); at most the budget. */
  tenantShare: number;
  /** The authenticated caller's tenant (the budget runs after authentication). */
  tenantOf(req: Request, res: Response): string;
  /** The largest body the parser accepts: its limit. */
  maxBody: number;
  registry: Registry;
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
}

/**
 * Wraps the JSON body parser so that the request bodies the gateway holds at
 * once stay within a byte budget; a body past it is answered 503 with
 * Retry-After (the caller retries in a few seconds) instead of being read.
 * Unbounded, 48 parallel 10 MB uploads took the gateway from 331 MB to 1.6 GB.
 *
 * A body counts from when it is admitted until its answer is sent and it has
 * been read to the end, since its parsed text and decoded bytes live that
 * long. With a Content-Length the body is admitted or refused before a byte
 * of it is read (Node then reads off the refused body, keeping the
 * connection). A chunked body is free while it stays small; the chunk that
 * takes it past SMALL_BODY_BYTES must take the parser's limit, since its
 * length is unknown, and once it has been read the budget gets back what it
 * did not use. A chunked body refused there gets nothing more to its parser,
 * and the rest is read off and dropped. Admission is all or nothing, once
 * per body: an admitted body is always read to its end. (Counting chunked
 * bodies as they streamed let 48 parallel uploads each take a share of the
 * budget and all be refused before any finished.) A compressed body may
 * inflate to the parser's limit, so it takes that much before it is read.
 */
export function bodyBudget(parse: RequestHandler, opts: BodyBudgetOptions): RequestHandler {
  const { budget, maxBody } = opts;
  const budgets = new TenantByteBudgets(budget, Math.min(opts.tenantShare, budget.limit));
  new Gauge({
    name: 'vouch_http_body_bytes_held',
    help: 'Bytes of request bodies admitted and not yet answered, against BODY_BUDGET_BYTES.',
    registers: [opts.registry],
    collect() {
      this.set(budget.held);
    },
  });
  const refusals = new Counter({
    name: 'vouch_http_body_budget_refusals_total',
    help: "Request bodies refused because the body budget was spent (budget=total: 503) or the caller's tenant held its share (budget=tenant: 429).",
    labelNames: ['budget'],
    registers: [opts.registry],
  });

  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) return parse(req, res, next);
    const tenant = opts.tenantOf(req, res);
    let taken = 0;
    let refused = false;
    let spent: 'total' | 'tenant' = 'total';
    const take = (n: number) => {
      const full = budgets.tryTake(tenant, n);
      if (full) {
        spent = full;
        return false;
      }
      if (taken === 0) releaseWhenDone();
      taken += n;
      return true;
    };
    // What a body holds is free once its answer is sent (the handler is done
    // with it) and its reading has ended: a chunked body refused mid-stream
    // keeps its partial text in the parser until the rest is read off.
    const releaseWhenDone = () => {
      let open = 2;
      const release = () => {
        if (--open === 0) budgets.give(tenant, taken);
      };
      res.once('close', release);
      finished(req, release);
    };
    const refuse = (bytes: number | undefined) => {
      refused = true;
      refusals.inc({ budget: spent });
      const size = bytes === undefined ? 'this body' : `this ${bytes}-byte body`;
      const body =
        spent === 'total'
          ? { code: ERROR_CODES.dependencyUnavailable, message: `the gateway holds as many request bodies as it may at once (BODY_BUDGET_BYTES=${budget.limit}): retry ${size} in a few seconds` }
          : {
              code: ERROR_CODES.tooManyRequests,
              message: `your requests hold as many body bytes as one tenant may at once (BODY_BUDGET_TENANT_BYTES=${budgets.share}): retry ${size} in a few seconds, once one of your large requests has been answered, or send fewer large bodies side by side`,
            };
      sendProblem(res, problemFromBody(body, { instance: req.originalUrl, requestId: res.locals.requestId as string }));
    };

    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
    if (encoding !== 'identity') return take(maxBody) ? parse(req, res, next) : refuse(declared);
    if (declared !== undefined) {
      // Past the parser's limit it answers 413 without reading; a small body is not counted.
      if (!(declared > SMALL_BODY_BYTES && declared <= maxBody)) return parse(req, res, next);
      return take(declared) ? parse(req, res, next) : refuse(declared);
    }

    // Chunked: body-parser starts reading now, synchronously, or skips the
    // body (not JSON) and calls back at once; counting stops when it is done.
    let received = 0;
    let counting = false;
    let parsing = true;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= SMALL_BODY_BYTES || taken > 0) return;
      if (take(maxBody)) return;
      // Starve the parser (its answer is dropped below) and read off the rest.
      for (const listener of req.listeners('data')) req.off('data', listener as (chunk: Buffer) => void);
      req.resume();
      refuse(undefined);
    };
    parse(req, res, (err?: unknown) => {
      parsing = false;
      req.off('data', count);
      // Read to its end (or cut at the limit): hold only what it holds.
      if (counting && taken > received) {
        budgets.give(tenant, taken - received);
        taken = received;
      }
      if (!refused) next(err);
    });
    if (!parsing) return;
    if (req.listenerCount('data') > 0) {
      counting = true;
      return void req.on('data', count);
    }
    // A parser that reads later than that cannot be counted chunk by chunk: it holds its limit.
    if (!take(maxBody)) refuse(undefined);
  };
}
