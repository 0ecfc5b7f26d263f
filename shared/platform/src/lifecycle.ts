import type { Logger } from './logger.js';

/**
 * Calls stop() once on the first SIGTERM or SIGINT, then exits 0 (1 if stop
 * failed). A second signal while stopping exits at once with 130, for a
 * person pressing Ctrl-C twice.
 */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal while stopping: exiting now');
      process.exit(130);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
