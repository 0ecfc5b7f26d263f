/**
 * @vouch/board-dispatcher — durable, event-sourced work boards of cards in
 * worker, verifier and synthesizer lanes, with one fenced dispatcher across
 * all replicas.
 */
export { boardDispatcherEnvSchema, type BoardDispatcherEnv } from './config.js';
export { BOARD_DISPATCHER_SERVICE, BOARD_DISPATCHER_VERSION, MIGRATIONS_DIR, startBoardDispatcher, type BoardDispatcherOverrides, type RunningBoardDispatcher } from './board-dispatcher-service.js';
export { boardHandlers, createBoardCommands, type BoardCaller, type BoardCommandDeps, type BoardCommands } from './board-handlers.js';
export * from './board-store.js';
export { BoardCache } from './board-cache.js';
export { Dispatcher, defaultHolder, type DispatcherOptions } from './dispatcher.js';
export { readLease, releaseLease, renewLease, tryAcquireLease, type LeaseRow, type LeaseTerm } from './dispatcher-lease.js';
export { WorkQueues, workQueueName } from './work-queues.js';
export * from './domain/board-commands.js';
export { parseBoardEvent, type BoardEvent, type BoardEventType } from './domain/board-events.js';
export { BoardStreamError, applyEvents, replayBoard, publicCard, type BoardState, type CardState } from './domain/replay-board.js';
export { renderBoardText } from './domain/render-board.js';
export { synthesizeBoard, unresolvedCards } from './domain/synthesize-board.js';
