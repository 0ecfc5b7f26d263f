import { randomUUID } from 'node:crypto';
import { maxHeaderSize as defaultMaxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { ERROR_CODES, type ErrorBody } from '@vouch/contracts';
import type { Logger } from '@vouch/platform';
import { problemFromBody } from './problem.js';

/** What to answer for an error node's HTTP parser raised before express saw a request. */
export function clientErrorBody(code: string | undefined, maxHeaderBytes: number): ErrorBody {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { code: ERROR_CODES.headersTooLarge, message: `the request headers are larger than ${maxHeaderBytes} bytes: send fewer or smaller headers (an oversized cookie or token?)` };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT') {
    return { code: ERROR_CODES.requestTimeout, message: 'the request did not arrive in time: send the whole request at once and retry' };
  }
  return { code: ERROR_CODES.badInput, message: 'the request is not valid HTTP/1.1: check the request line, headers and body framing' };
}

/**
 * Answers protocol-level errors (oversized headers, a malformed request, a
 * request that never finished arriving) with an application/problem+json
 * document, as every other error, instead of node's bare status line. The
 * parser refuses these before express runs, so the answer is written on the
 * raw socket, and the connection is closed: its framing can no longer be trusted.
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  // The gateway does not set createServer's maxHeaderSize, so node's limit (--max-http-header-size) applies.
  const maxHeaderBytes = defaultMaxHeaderSize;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const problem = problemFromBody(clientErrorBody(err.code, maxHeaderBytes), { requestId });
    logger.warn({ requestId, code: err.code, status: problem.status }, 'refused a malformed request');
    const body = Buffer.from(JSON.stringify(problem));
    socket.end(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${body.length}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body.toString(),
    );
  });
}
