import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver that accepts every request and never answers (a tarpit), until a path is released: the
 * requests it holds then, and the later ones, get 200. Counts what it holds, per path and in all, at every moment.
 */
export class Tarpit {
  url = '';
  /** Every request's path and arrival time. */
  readonly arrivals: Array<{ path: string; at: number }> = [];
  /** Requests held at once, at most, since the start (or the last `resetPeaks`). */
  peak = 0;
  readonly peakByPath = new Map<string, number>();
  private readonly holding = new Map<string, Set<http.ServerResponse>>();
  private readonly released = new Set<string>();
  private server!: http.Server;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const path = req.url ?? '/';
      this.arrivals.push({ path, at: Date.now() });
      req.resume();
      if (this.released.has(path)) {
        res.end('ok');
        return;
      }
      const held = this.holding.get(path) ?? new Set();
      this.holding.set(path, held.add(res));
      this.peakByPath.set(path, Math.max(this.peakByPath.get(path) ?? 0, held.size));
      this.peak = Math.max(this.peak, this.held());
      res.on('close', () => held.delete(res));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Requests held now. */
  held(path?: string): number {
    if (path !== undefined) return this.holding.get(path)?.size ?? 0;
    return [...this.holding.values()].reduce((n, s) => n + s.size, 0);
  }

  resetPeaks(): void {
    this.peak = this.held();
    this.peakByPath.clear();
    for (const [path, held] of this.holding) this.peakByPath.set(path, held.size);
  }

  /** From now on `path` answers 200, the requests it holds included. */
  release(path: string): void {
    this.released.add(path);
    for (const res of this.holding.get(path) ?? []) res.end('ok');
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
