import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';

describe('createLogger', () => {
  it('writes JSON lines with the service and redacts credentials', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().trim().split('\n'));
        done();
      },
    });
    const logger = createLogger({ service: 'redact-test', destination: sink });
    logger.info(
      {
        req: { headers: { authorization: 'Bearer vk_abc_secret', cookie: 'session=1', accept: 'json' } },
        config: { DATABASE_URL: 'postgres://u:pw@db/x', apiKey: 'k', password: 'p', PORT: 8080 },
      },
      'hello',
    );
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: 'info', service: 'redact-test', msg: 'hello' });
    expect(line.req.headers).toEqual({ authorization: '[redacted]', cookie: '[redacted]', accept: 'json' });
    expect(line.config).toEqual({ DATABASE_URL: '[redacted]', apiKey: '[redacted]', password: '[redacted]', PORT: 8080 });
    expect(lines[0]).not.toContain('secret');
  });
});
