import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths pino blanks in every log line: credentials never reach the logs. */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.password',
  '*.apiKey',
  '*.token',
  '*.secret',
  '*.DATABASE_URL',
  '*.DATABASE_DIRECT_URL',
  '*.REDIS_URL',
  '*.REDIS_SENTINEL_PASSWORD',
  'DATABASE_URL',
  'DATABASE_DIRECT_URL',
  'REDIS_URL',
  'REDIS_SENTINEL_PASSWORD',
];

/** Structured JSON logger for a process; `service` is on every line. */
export function createLogger(opts: { service: string; level?: string; destination?: pino.DestinationStream }): Logger {
  const options: pino.LoggerOptions = {
    name: opts.service,
    level: opts.level ?? 'info',
    base: { service: opts.service, pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
