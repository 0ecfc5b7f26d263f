/** The gateway process: config, start, and an ordered stop on SIGTERM/SIGINT. */
import { loadConfigOrExit, startOrExit, stopOnSignals } from '@vouch/platform';
import { gatewayEnvSchema } from './config.js';
import { startGateway } from './gateway.js';

const env = loadConfigOrExit('gateway', gatewayEnvSchema);
const gateway = await startOrExit('gateway', () => startGateway(env));
stopOnSignals(gateway.stop, gateway.logger);
