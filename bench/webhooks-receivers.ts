import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { epochMs } from './commit-latency';

// The far ends of bench/webhooks-throughput.ts and bench/webhooks-tarpit.ts, in the bench's process: a receiver that
// answers 200 at once, and a tarpit that accepts connections and never answers.

export interface Receipt {
  /** The `webhook-id` header (the event's id). */
  id: string;
  /** Arrival, epoch ms (the clock bench/write-ceiling-writers.ts times commits with). */
  at: number;
  body: string;
}

/**
 * An integration's receiver as write-ceiling runs one: answers 200 at once; keeps the first receipt of each
 * `webhook-id` (its arrival and its body, parsed later, off the receiving path) and counts repeats.
 */
export class HookReceiver {
  readonly first = new Map<string, Receipt>();
  duplicates = 0;
  url = '';
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = epochMs();
      const id = String(req.headers['webhook-id']);
      if (this.first.has(id)) this.duplicates++;
      else this.first.set(id, { id, at, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  reset(): void {
    this.first.clear();
    this.duplicates = 0;
  }

  /** First receipts that arrived between `from` and `to` (epoch ms). */
  between(from: number, to: number): number {
    let n = 0;
    for (const r of this.first.values()) if (r.at >= from && r.at <= to) n++;
    return n;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A receiver gone bad the slow way: a TCP server on loopback that accepts every connection, reads and discards what
 * comes, and never answers nor closes. An attempt to it holds its slot until the sender's timeout (WEBHOOK_TIMEOUT).
 */
export class Tarpit {
  url = '';
  /** Connections open now, the most at once since the last `reset`, and accepted in all. */
  open = 0;
  maxOpen = 0;
  accepted = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((socket) => {
    this.sockets.add(socket);
    this.accepted++;
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.open--;
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Cuts every connection still held (between two measures) and starts the counts anew. */
  reset(): void {
    for (const s of this.sockets) s.destroy();
    this.maxOpen = 0;
    this.accepted = 0;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
