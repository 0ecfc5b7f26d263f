/** The extractor process: config, start, and an ordered stop on SIGTERM/SIGINT. */
import { loadConfigOrExit, startOrExit, stopOnSignals } from '@vouch/platform';
import { extractorEnvSchema } from './config.js';
import { EXTRACTOR_SERVICE, startExtractor } from './extractor-service.js';

const env = loadConfigOrExit(EXTRACTOR_SERVICE, extractorEnvSchema);
const running = await startOrExit(EXTRACTOR_SERVICE, () => startExtractor(env));
stopOnSignals(running.stop, running.logger);
