import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * The most read and discarded after an early answer. A client that reads its answer only once it has sent its whole
 * body (many synchronous clients do) gets it for any body up to this size: issue 41 met bodies of 5 to 50 MB sent to
 * a service that takes 1 MiB. Past it the client is no longer sending by mistake, and reading it costs the parser.
 */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;
/**
 * The longest a connection lingers after its answer: LINGER_MAX_BYTES at about 100 Mbit/s. A client that reads while
 * it sends (curl, browsers, Node's clients) needs one round trip of it. nginx's 30 s (lingering_time) is for clients on
 * slow links; this service's are a balancer or services on the same network, and a shutdown's drain waits for
 * lingering connections within SHUTDOWN_TIMEOUT_MS (10 s).
 */
export const LINGER_MAX_MS = 5000;
/** A client that sends nothing for this long has stopped sending: what it had in flight has arrived (nginx: 5 s). */
export const LINGER_IDLE_MS = 1000;

interface Lingering {
  /** The connection ends once the discarding does: its answer is the last one. */
  closing: boolean;
}

/** Connections whose client is still sending after their answer. */
const lingering = new WeakMap<Duplex, Lingering>();

/** Whether `socket`'s client is still sending after its answer: what comes is discarded. */
const isLingering = (socket: Duplex): boolean => lingering.has(socket);

/**
 * Whether `socket` is closing, lingering after its last answer: its parser's errors on what still comes are not
 * requests. A kept-alive connection discarding a body is not closing: a parser error there is answered as any other.
 */
export const isClosingLingering = (socket: Duplex): boolean => lingering.get(socket)?.closing === true;

/** What Node's socket.destroySoon does: the FIN after what is written, then the socket destroyed. */
function destroyOnceWritten(socket: Socket): void {
  if (socket.writable) socket.end();
  if (socket.writableFinished) socket.destroy();
  else socket.once('finish', () => socket.destroy());
}

/**
 * How often a lingering connection's bytes, time and silence are looked at. 64 MiB arrive in about 0.1 s on loopback:
 * a client as fast has some 16 MB more read past LINGER_MAX_BYTES before its cut.
 */
const LINGER_CHECK_MS = 10;

/**
 * Reads and discards what `socket`'s client still sends after an answer, until `body` (the request answered) has
 * arrived, or the client ends its side, or a bound is reached; then, when closing, the connection is closed.
 *
 * Bytes are the socket's bytesRead, looked at by a timer: there is no event per chunk to look at them on. Node pushes
 * nothing into a body it discards, its parser refuses chunks after an error without a word, and a 'data' listener on
 * the socket would take it from the C++ parser that reads it, and stall it when Node had paused it for a body no one
 * read.
 */
function discard(socket: Socket, body?: IncomingMessage): Lingering {
  const known = lingering.get(socket);
  if (known) return known;
  const started = Date.now();
  const from = socket.bytesRead;
  let seen = from;
  let seenAt = started;
  const stop = () => {
    clearInterval(timer);
    socket.off('end', clientDone);
    socket.off('close', stop);
    body?.off('end', bodyRead);
    lingering.delete(socket);
  };
  // The client has had its bound to read its answer: what it still sends is refused with a reset.
  const check = () => {
    const now = Date.now();
    if (socket.bytesRead !== seen) {
      seen = socket.bytesRead;
      seenAt = now;
    }
    if (seen - from > LINGER_MAX_BYTES || now - seenAt >= LINGER_IDLE_MS || now - started >= LINGER_MAX_MS) {
      stop();
      socket.destroy();
    }
  };
  const state: Lingering = { closing: false };
  // Nothing unread is left behind: the close is a FIN, not the reset that would erase the client's unread answer.
  const bodyRead = () => {
    stop();
    if (state.closing) destroyOnceWritten(socket);
  };
  // A client that ends its side in a body's middle has abandoned the request: nothing more will come on it.
  const clientDone = () => {
    stop();
    destroyOnceWritten(socket);
  };
  const timer = setInterval(check, LINGER_CHECK_MS).unref();
  socket.once('end', clientDone);
  socket.once('close', stop);
  if (body) {
    body.once('end', bodyRead);
    // Whatever paused it (the body parser halts a body over its limit), the body is now read only to be discarded.
    body.resume();
  }
  lingering.set(socket, state);
  return state;
}

/**
 * Closes `socket` after the answer written to it, its client still sending (the request answered is `body`, or one
 * Node's parser refused): a FIN now, then what comes is read and discarded until the body has arrived, the client
 * ends its side, or a bound is reached.
 */
export function closeLingering(socket: Socket, body?: IncomingMessage): void {
  discard(socket, body).closing = true;
  if (socket.writable) socket.end();
}

/**
 * Every answer sent before its request's body has arrived (413 over the size limit, 401 and 429 before the body is
 * read, any other) is read by every client: a lingering close (RFC 9112 section 9.6; nginx's lingering_close).
 *
 * Closing a connection with unread bytes in the kernel's buffer sends a reset, and a reset erases the answer its client
 * had received but not read yet: Node's http.request, still writing its body, then fails with EPIPE and never reads
 * it (issue 41: up to 15 of 20 such requests). Node's server closes that way after an answer with `Connection: close`.
 * Here, a connection answered before its body arrived:
 *
 * - closing: sends its FIN after the answer, then reads and discards until the body has arrived or the client ends
 *   its side, and only then is closed;
 * - kept alive: Node reads and discards the body itself, as before, within the same bounds;
 * - at LINGER_MAX_BYTES received after the answer, LINGER_MAX_MS after it, or LINGER_IDLE_MS without a byte, it is
 *   cut: a client cannot hold a connection, nor the parser, by streaming a body no one will read.
 *
 * Answers to requests Node's parser refused (src/platform/http/client-error.ts) close through closeLingering.
 */
export function lingerAfterEarlyAnswers(server: Server): void {
  /** Each connection's last request: the only one whose body can still be arriving. */
  const latest = new WeakMap<Socket, IncomingMessage>();
  server.on('connection', (socket: Socket) => {
    // Node's server closes a connection after its last answer with socket.destroySoon() (lib/_http_server.js,
    // resOnFinish), undocumented, as drainingServer does at shutdown: the one place where that close can wait.
    socket.destroySoon = () => {
      const req = latest.get(socket);
      if (isLingering(socket) || (req && !req.complete)) closeLingering(socket, req);
      else destroyOnceWritten(socket);
    };
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    latest.set(req.socket, req);
    res.once('finish', () => {
      if (!req.complete) discard(req.socket, req);
    });
  });
}
