import { randomUUID } from 'node:crypto';
import { STATUS_CODES, maxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { MalformedRequestError } from '../errors/errors';
import { errorPayload, errorSurface } from '../errors/http';
import { closeLingering, isClosingLingering } from './lingering-close';

/** The answer to a parser error: Node's own status (431, 408, 400), or 414 when the request line alone is too long. */
function refusal(err: NodeJS.ErrnoException, requestLine: string | null, headerLimit: number): MalformedRequestError {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // Node counts the request line in its header limit; a line that alone overflows it is a URL too long.
    return requestLine === null || requestLine.length >= headerLimit
      ? new MalformedRequestError(414, 'The request URL is longer than the server accepts')
      : new MalformedRequestError(431, 'The request headers are larger than the server accepts');
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new MalformedRequestError(408, 'The request was not received in time');
  return new MalformedRequestError(400, 'The request is not valid HTTP');
}

/**
 * Requests Node's HTTP parser refuses (an oversized URL or header, a malformed request line) never reach
 * Koa, and Node answers them with an empty body. They get the error body of their endpoint like any other
 * error, chosen by the path of the request line when there is one.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    // Like Node's own handler: nothing to write to a closed socket, nor into an answer already started on it.
    const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (err.code === 'ECONNRESET' || answering) {
      socket.destroy();
      return;
    }
    // Answered: the parser, failed for good, refuses each chunk its client still sends, and those are being discarded.
    if (isClosingLingering(socket)) return;
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const head = err.rawPacket?.toString('latin1') ?? '';
    const end = head.indexOf('\r\n');
    const requestLine = end >= 0 ? head.slice(0, end) : null;
    const path = (/^[A-Z]+ (\/[^ ?]*)/.exec(head)?.[1]) ?? '/';
    const error = refusal(err, requestLine, maxHeaderSize);
    const requestId = randomUUID();
    const body = JSON.stringify(errorPayload(errorSurface(path), error, requestId));
    socket.end([
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'Connection: close',
      '',
      // The answer to a HEAD request has no body (RFC 9110 section 9.3.2), only the headers of one.
      head.startsWith('HEAD ') ? '' : body,
    ].join('\r\n'));
    // Its client may still be sending the request (its headers, its body): closed as any early answer's connection.
    // An http.Server's connections are net.Sockets (the event's type is any Duplex).
    closeLingering(socket as Socket);
  });
}
