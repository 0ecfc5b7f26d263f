/** The ledger-critic process: config, start, and an ordered stop on SIGTERM/SIGINT. */
import { loadConfigOrExit, startOrExit, stopOnSignals } from '@vouch/platform';
import { ledgerCriticEnvSchema } from './config.js';
import { LEDGER_CRITIC_SERVICE, startLedgerCritic } from './ledger-critic-service.js';

const env = loadConfigOrExit(LEDGER_CRITIC_SERVICE, ledgerCriticEnvSchema);
const running = await startOrExit(LEDGER_CRITIC_SERVICE, () => startLedgerCritic(env));
stopOnSignals(running.stop, running.logger);
