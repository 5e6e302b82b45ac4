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

/**
 * Connections whose client stopped reading, or reads slower than it is sent to (docs/subscriptions.md, "Clients
 * that stop reading"), found by one sweep every `sendTimeoutMs` over every connection (graphql-ws's own keep-alive,
 * which this replaces, kept a timer per connection and a listener per ping):
 *
 * - what waits in the process, ws's `bufferedAmount`, over `maxBufferedBytes`: checked at each sweep and before each
 *   message (`check`). graphql-ws sends a subscription's next update once the previous one went to the kernel, so
 *   this holds a message per subscription unless the messages are large;
 * - the time: each sweep pings every connection, and a connection that has not answered the previous sweep's ping is
 *   slow. A ping goes behind everything already sent, so its pong measures what `bufferedAmount` cannot see: the
 *   kernel's socket buffers (up to tcp_wmem's 4 MB on Linux, per connection) and the client's own. A client that
 *   stopped reading altogether never answers.
 *
 * Either way `onSlow` is told once; it closes the connection.
 */
export function watchSlowReaders(wss: WebSocketServer, limits: SlowReaderLimits, onSlow: (ws: WebSocket, bound: SlowBound, message: string) => void) {
  /** Connections pinged by the last sweep whose pong has not come back. */
  const awaitingPong = new WeakSet<WebSocket>();
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
    awaitingPong.delete(this);
  };
  const onConnection = (ws: WebSocket, _request: IncomingMessage) => void ws.on('pong', onPong);
  wss.on('connection', onConnection);
  const sweep = setInterval(() => {
    for (const ws of wss.clients) {
      if (ws.readyState !== ws.OPEN || told.has(ws) || overBytes(ws)) continue;
      if (awaitingPong.has(ws)) {
        slow(ws, 'time', `The client reads too slowly: it had not read what was sent to it ${limits.sendTimeoutMs / 1000} s later; reconnect later`);
        continue;
      }
      awaitingPong.add(ws);
      ws.ping();
    }
  }, limits.sendTimeoutMs);
  sweep.unref();
  return {
    /** Before a message is sent: true (and the connection told slow) when what waits is over the bound already. */
    check: (ws: WebSocket) => told.has(ws) || overBytes(ws),
    stop() {
      clearInterval(sweep);
      wss.off('connection', onConnection);
    },
  };
}
