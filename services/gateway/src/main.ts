/** The gateway process: config, start, and an ordered stop on SIGTERM/SIGINT. */
import { loadConfigOrExit, stopOnSignals } from '@vouch/platform';
import { gatewayEnvSchema } from './config.js';
import { startGateway } from './gateway.js';

const env = loadConfigOrExit('gateway', gatewayEnvSchema);
const gateway = await startGateway(env);
stopOnSignals(gateway.stop, gateway.logger);
