import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Stops a server without losing an answer: see drainConnections. */
export interface ConnectionDrain {
  /**
   * Stops accepting connections, lets requests in flight finish, closes
   * each keep-alive connection as soon as it is idle, and cuts what is still
   * open after graceMs. Resolves once every connection is closed.
   */
  stop(graceMs: number): Promise<void>;
}

/**
 * Tracks a server's responses so that a stop drains keep-alive connections
 * instead of cutting them. Without it a keep-alive client keeps sending on
 * its open connection after the stop began (server.close only refuses new
 * connections), and the cut at the end of the grace period lands in the
 * middle of a request whose write was applied: the client never gets its
 * answer. Once stopping, every response says `Connection: close`, so the
 * client opens a new connection for its next request (refused, nothing
 * applied), and each connection is closed the moment it goes idle.
 */
export function drainConnections(server: Server): ConnectionDrain {
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  // Before express: the header must be set before the app writes the response.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    inFlight.add(res);
    if (stopping) res.setHeader('Connection', 'close');
    res.on('close', () => {
      inFlight.delete(res);
      if (stopping) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    stop(graceMs) {
      stopping = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Requests still running after the grace period get their sockets cut.
        setTimeout(() => server.closeAllConnections(), graceMs).unref();
      });
    },
  };
}
