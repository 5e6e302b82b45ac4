import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';

/** Which bound a connection went over: what waits in the process (`bytes`), or the time its client took to catch up (`time`). */
export type SlowBound = 'bytes' | 'time';

export interface SlowReaderLimits {
  /** Bytes a connection may have waiting in this process (ws's bufferedAmount) before it is closed. */
  maxBufferedBytes: number;
  /** How long a client may take to read everything sent to it, its ping last: the keep-alive's interval. */
  sendTimeoutMs: number;
}

/** Per connection: when its next ping is due, and when the ping not answered yet went (0: none waits). */
interface Watch {
  pingAt: number;
  pingedAt: number;
}

/**
 * Connections whose client stopped reading, or reads slower than it is sent to (docs/subscriptions.md, "Clients
 * that stop reading"), found by one timer over every connection (graphql-ws's own keep-alive, which this replaces,
 * kept a timer per connection and added a listener per ping):
 *
 * - what waits in the process, ws's `bufferedAmount`, over `maxBufferedBytes`: checked at each tick and before each
 *   message (`check`). graphql-ws sends a subscription's next update once the previous one went to the kernel, so
 *   this holds a message per subscription unless the messages are large;
 * - the time: each connection is pinged every `sendTimeoutMs`, and one whose ping is not answered `sendTimeoutMs`
 *   later is slow. A ping goes behind everything already sent, so its pong measures what `bufferedAmount` cannot see:
 *   the kernel's socket buffers (up to tcp_wmem's 4 MB on Linux, per connection) and the client's own. A client that
 *   stopped reading altogether never answers.
 *
 * Each connection's pings keep the phase of its opening, so that 10,000 pings, and their pongs, do not all come in
 * one turn of the event loop. Either way `onSlow` is told once; it closes the connection.
 */
export function watchSlowReaders(wss: WebSocketServer, limits: SlowReaderLimits, onSlow: (ws: WebSocket, bound: SlowBound, message: string) => void) {
  const watches = new WeakMap<WebSocket, Watch>();
  const told = new WeakSet<WebSocket>();
  const slow = (ws: WebSocket, bound: SlowBound, message: string) => {
    if (told.has(ws)) return;
    told.add(ws);
    onSlow(ws, bound, message);
  };
  const overBytes = (ws: WebSocket) => {
    if (ws.bufferedAmount <= limits.maxBufferedBytes) return false;
    slow(ws, 'bytes', `The client reads too slowly: over ${limits.maxBufferedBytes} bytes wait to be sent to it; reconnect later`);
    return true;
  };
  const onPong = function (this: WebSocket) {
    const watch = watches.get(this);
    if (watch) watch.pingedAt = 0;
  };
  const onConnection = (ws: WebSocket, _request: IncomingMessage) => {
    watches.set(ws, { pingAt: Date.now() + limits.sendTimeoutMs, pingedAt: 0 });
    ws.on('pong', onPong);
  };
  wss.on('connection', onConnection);
  // A tenth of the interval (at most 1 s): a ping goes within that of its time, an unanswered one is found as soon.
  const tick = setInterval(() => {
    const now = Date.now();
    for (const ws of wss.clients) {
      const watch = watches.get(ws);
      if (!watch || ws.readyState !== ws.OPEN || told.has(ws) || overBytes(ws)) continue;
      if (watch.pingedAt) {
        if (now - watch.pingedAt >= limits.sendTimeoutMs) {
          slow(ws, 'time', `The client reads too slowly: it had not read what was sent to it ${limits.sendTimeoutMs / 1000} s later; reconnect later`);
        }
      } else if (now >= watch.pingAt) {
        watch.pingedAt = now;
        watch.pingAt = now + limits.sendTimeoutMs;
        ws.ping();
      }
    }
  }, Math.min(1000, limits.sendTimeoutMs / 10));
  tick.unref();
  return {
    /** Before a message is sent: true (and the connection told slow) when what waits is over the bound already. */
    check: (ws: WebSocket) => told.has(ws) || overBytes(ws),
    stop() {
      clearInterval(tick);
      wss.off('connection', onConnection);
    },
  };
}
