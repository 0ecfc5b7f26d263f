/**
 * @vouch/platform — what every vouch process needs, written once: config,
 * logging, Redis and Postgres connections, migrations, the event-stream kit
 * of event-sourced aggregates, metrics, the worker bootstrap, the ops HTTP
 * server and graceful shutdown.
 */
export * from './config.js';
export * from './local-stack.js';
export * from './logger.js';
export * from './redis.js';
export * from './event-stream.js';
export * from './postgres.js';
export * from './event-stream-store.js';
export * from './event-stream-cache.js';
export * from './event-stream-write.js';
export * from './metrics.js';
export * from './tenant-label.js';
export * from './lease-releases.js';
export * from './handlers.js';
export * from './failure-kind.js';
export * from './classify-ollama-failure.js';
export * from './ollama-call.js';
export * from './worker.js';
export * from './worker-presence.js';
export * from './health.js';
export * from './ops-server.js';
export * from './lifecycle.js';
export * from './startup.js';
export * from './queue-service.js';
export * from './queue-hub.js';
export * from './operation-call.js';
export * from './slices.js';
