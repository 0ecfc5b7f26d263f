/** The vision-router process: config, start, and an ordered stop on SIGTERM/SIGINT. */
import { loadConfigOrExit, startOrExit, stopOnSignals } from '@vouch/platform';
import { visionRouterEnvSchema } from './config.js';
import { VISION_ROUTER_SERVICE, startVisionRouter } from './vision-router-service.js';

const env = loadConfigOrExit(VISION_ROUTER_SERVICE, visionRouterEnvSchema);
const running = await startOrExit(VISION_ROUTER_SERVICE, () => startVisionRouter(env));
stopOnSignals(running.stop, running.logger);
