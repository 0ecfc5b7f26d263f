/**
 * The whole system in one test process: a real gateway and every queue
 * service that serves the operation table, on one BullMQ prefix, each with
 * its own Postgres schema. Suites that walk the operation table (fuzz,
 * tenant isolation) run against it, so a new service joins them by adding
 * its starter to SERVICE_STARTERS.
 */
import { startBoardServiceUnderTest } from '../../board-dispatcher/test/board-test-env.js';
import { startGatedExtractorUnderTest } from '../../extractor/test/extractor-test-env.js';
import { startLedgerServiceUnderTest } from '../../ledger-critic/test/ledger-test-env.js';
import { startVisionServiceUnderTest } from '../../vision-router/test/vision-test-env.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

/** What a service starter gets: the shared prefix, and the gateway's schema (the vision-router reads its media tables). */
export interface StackContext {
  prefix: string;
  gatewaySchema: string;
}

/** Starts one queue service for the stack; resolves once its worker takes jobs. */
export type ServiceStarter = (label: string, ctx: StackContext) => Promise<{ stop(): Promise<void> }>;

/** Every queue service, by the queue it consumes. */
export const SERVICE_STARTERS: Record<string, ServiceStarter> = {
  'ledger-critic': (label, ctx) => startLedgerServiceUnderTest(label, {}, { prefix: ctx.prefix }),
  // Serves both extractor queues: extractor-gpu behind its gate (fake nvidia-smi, Ollama test server).
  extractor: (label, ctx) => startGatedExtractorUnderTest(label, { prefix: ctx.prefix }),
  'vision-router': (label, ctx) => startVisionServiceUnderTest(label, { prefix: ctx.prefix, schema: ctx.gatewaySchema }),
  'board-dispatcher': (label, ctx) => startBoardServiceUnderTest(label, {}, { prefix: ctx.prefix }),
};

export interface FullStack {
  gw: GatewayUnderTest;
  stop(): Promise<void>;
}

export async function startFullStack(label: string, gatewayVars: Record<string, string> = {}): Promise<FullStack> {
  const gw = await startGatewayUnderTest(label, gatewayVars);
  const services: Array<{ stop(): Promise<void> }> = [];
  try {
    for (const start of Object.values(SERVICE_STARTERS)) services.push(await start(label, { prefix: gw.prefix, gatewaySchema: gw.schema }));
  } catch (err) {
    for (const s of services.reverse()) await s.stop().catch(() => {});
    await gw.stop();
    throw err;
  }
  return {
    gw,
    async stop() {
      for (const s of services.reverse()) await s.stop().catch(() => {});
      await gw.stop();
    },
  };
}
