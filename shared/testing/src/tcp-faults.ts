import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP proxy to a real server that a test can cut, as if the server went away. */
export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's, e.g. a DATABASE_URL through the proxy. */
  through(url: string): string;
  /**
   * Stops listening and resets every open connection: new connections are
   * refused (ECONNREFUSED) and clients holding one see it drop, as when the
   * server stops. Resolves once the port is closed.
   */
  cut(): Promise<void>;
  /** Listens again on the same port (after cut), so a test can watch recovery. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Forwards 127.0.0.1:<ephemeral port> to `target` until cut. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const makeServer = () =>
    createServer((client) => {
      const upstream = connect(target.port, target.host);
      open.add(client);
      open.add(upstream);
      const drop = () => {
        open.delete(client);
        open.delete(upstream);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  let server: Server = makeServer();
  const port = await listen(server, 0);
  const cut = async () => {
    if (!server.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of open) s.resetAndDestroy();
    open.clear();
    await closed;
  };
  return {
    port,
    through(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut,
    async restore() {
      if (server.listening) return;
      server = makeServer();
      await listen(server, port);
    },
    close: cut,
  };
}

/** A server that accepts connections and never says a byte: a hung dependency. */
export interface SilentServer {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listen(server, 0);
  return {
    port,
    get accepted() {
      return accepted;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/**
 * A local port nothing listens on: bound, then released. Another process could
 * take it in between, but the kernel hands out ephemeral ports round-robin, so
 * in practice it stays closed for the length of a test.
 */
export async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server, 0);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
