import { Server as NetServer, type Socket } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AppMiddleware } from './state';

/**
 * What the HTTP layer knows of the process's life: `shuttingDown` is set once, when a shutdown begins
 * (src/platform/shutdown.ts). From then on readiness answers 503 and every response asks its client to close the
 * connection.
 */
export interface Lifecycle {
  shuttingDown: boolean;
}

export function createLifecycle(): Lifecycle {
  return { shuttingDown: false };
}

/**
 * Outermost middleware: once shutting down, every response, in flight or new, carries `Connection: close`.
 * A keep-alive client then opens its next connection elsewhere (the load balancer has taken this instance
 * out) instead of having a request cut when the connection is finally closed.
 */
export function closeConnectionsWhenStopping(lifecycle: Lifecycle): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      if (lifecycle.shuttingDown) ctx.set('Connection', 'close');
    }
  };
}

/** How long a connection accepted without a request yet is given, once the listener closed, to send it. */
const FRESH_CONNECTION_GRACE_MS = 1000;
/** How long a keep-alive connection idle after an answer is kept, once the listener closed, for a request on its way. */
const IDLE_CONNECTION_GRACE_MS = 250;
/**
 * The longest the listener stays open after the signal to take what the kernel has queued: a loaded 2-core CI machine
 * left connections queued 1.1-1.3 s, which a 1 s window reset.
 */
const ACCEPT_WINDOW_MS = 3000;

interface ConnectionState {
  /** Requests answered on it. */
  served: number;
  /** Requests received and not yet answered. */
  inFlight: number;
}

/**
 * The drain of an HTTP server's connections at shutdown (docs/shutdown.md). Node's `server.close()` closes every
 * connection idle at that moment, and a connection accepted a moment ago whose request has not been read yet counts
 * as idle: its client, which sent a request, gets a reset (issue 33: 5 to 7 of 30 clients opening a connection per
 * request). And closing the listener resets every connection the kernel completed and queued that Node has not
 * accepted yet: on a busy instance, measured, 10 to 30 of them, queued for up to 1.3 s. Here:
 *
 * - the listener stays open until a turn of the event loop accepts nothing (at most ACCEPT_WINDOW_MS): what the
 *   kernel had queued is accepted and served, not reset;
 * - a connection with a request running, waiting for its turn (admission), or being read, stays: its answer carries
 *   `Connection: close` (closeConnectionsWhenStopping) and the connection ends after it;
 * - a keep-alive connection idle after an answer is given IDLE_CONNECTION_GRACE_MS for a request its client may be
 *   sending at that moment (answered, with `Connection: close`), then closed;
 * - a connection accepted with no request yet is given FRESH_CONNECTION_GRACE_MS to send one, then closed.
 *
 * A client that opens a connection after the signal may still meet the listener's close: refused, or reset when the
 * kernel queued it in the instant between the last accept and the close. The grace (SHUTDOWN_GRACE_MS, readiness
 * failing while the listener still serves) is what lets a balancer stop sending first.
 *
 * Every close here is socket.destroySoon(): a connection whose client is still sending a body its answer did not read
 * closes lingering (lingering-close.ts), reading the rest first, for at most LINGER_MAX_MS.
 *
 * Resolves once the last connection has ended. The shutdown's bound (SHUTDOWN_TIMEOUT_MS) cuts whatever is left.
 */
export function drainingServer(server: Server): { drain(): Promise<void> } {
  const connections = new Map<Socket, ConnectionState>();
  let draining = false;
  let acceptedThisTurn = false;
  const closeWhenIdle = (socket: Socket, graceMs: number) => setTimeout(() => {
    const now = connections.get(socket);
    if (now && now.inFlight === 0) socket.destroySoon();
  }, graceMs).unref();
  server.on('connection', (socket: Socket) => {
    acceptedThisTurn = true;
    connections.set(socket, { served: 0, inFlight: 0 });
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = connections.get(req.socket);
    if (!state) return;
    state.inFlight++;
    res.once('close', () => {
      state.inFlight--;
      state.served++;
      // Draining: nothing more is taken on it (its answer said Connection: close, when the shutdown set it).
      if (draining && state.inFlight === 0) req.socket.destroySoon();
    });
  });
  return {
    drain: () => new Promise<void>((resolve) => {
      draining = true;
      const started = Date.now();
      acceptedThisTurn = true;
      const closeOnceQueueEmpty = () => {
        // A turn that accepted something may have left more queued behind it: another turn.
        if (acceptedThisTurn && Date.now() - started < ACCEPT_WINDOW_MS) {
          acceptedThisTurn = false;
          setImmediate(closeOnceQueueEmpty);
          return;
        }
        // Stops listening only: net.Server's close, not http.Server's, which also closes the connections idle now.
        NetServer.prototype.close.call(server, () => resolve());
        for (const [socket, state] of connections) {
          if (state.inFlight === 0) closeWhenIdle(socket, state.served > 0 ? IDLE_CONNECTION_GRACE_MS : FRESH_CONNECTION_GRACE_MS);
        }
      };
      setImmediate(closeOnceQueueEmpty);
    }),
  };
}
