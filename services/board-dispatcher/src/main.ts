/** The board-dispatcher process: config, start, and an ordered stop on SIGTERM/SIGINT. */
import { loadConfigOrExit, startOrExit, stopOnSignals } from '@vouch/platform';
import { BOARD_DISPATCHER_SERVICE, startBoardDispatcher } from './board-dispatcher-service.js';
import { boardDispatcherEnvSchema } from './config.js';

const env = loadConfigOrExit(BOARD_DISPATCHER_SERVICE, boardDispatcherEnvSchema);
const running = await startOrExit(BOARD_DISPATCHER_SERVICE, () => startBoardDispatcher(env));
stopOnSignals(running.stop, running.logger);
