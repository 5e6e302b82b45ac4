import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { request } from './http';

/** One POST the receiver got: its Standard Webhooks headers and its raw body. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The path it was sent to (several endpoints share one receiver by path). */
  path: string;
  at: number;
}

type Answer = number | { status: number; headers: Record<string, string> };

/**
 * A webhook receiver on loopback, as an integration would run one: records every request and answers with the
 * status `answer` gives for the n-th request to a path (200 by default), optionally after a delay.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private server!: http.Server;
  url = '';
  /** The status, or the status and headers, of the n-th request to a path. */
  answer: (path: string, nth: number) => Answer | Promise<Answer> = () => 200;
  private readonly counts = new Map<string, number>();
  private readonly waiters: Array<() => void> = [];

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const path = req.url ?? '/';
        const nth = (this.counts.get(path) ?? 0) + 1;
        this.counts.set(path, nth);
        this.received.push({
          id: String(req.headers['webhook-id']), timestamp: String(req.headers['webhook-timestamp']),
          signature: String(req.headers['webhook-signature']), body: Buffer.concat(chunks).toString('utf8'), path, at: Date.now(),
        });
        for (const w of this.waiters.splice(0)) w();
        const answer = await this.answer(path, nth);
        const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
        res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(status < 300 ? 'ok' : `status ${status}`);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** What reached `path`. */
  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Resolves once `done()` holds; fails after `ms`. */
  async until(done: () => boolean, ms = 15000, what = 'the expected deliveries'): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (received ${this.received.length})`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Verifies a delivery with the specification's own library; returns the parsed payload (throws when it does not verify). */
export function verified(secret: string, r: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature }) as never;
}

/** Registers an endpoint through REST, as an organization's Administrator does; its id and its secret. */
export async function registerWebhook(baseUrl: string, token: string, endpoint: { organizationId: string; url: string; eventTypes: string[] }): Promise<{ id: string; secret: string }> {
  const res = await request(baseUrl, 'POST', '/api/svc/v1/webhooks', {
    token, body: { organization_id: endpoint.organizationId, url: endpoint.url, event_types: endpoint.eventTypes },
  });
  if (res.status !== 201) throw new Error(`webhook not created: ${res.status} ${res.text}`);
  return { id: res.body.webhook.id, secret: res.body.secret };
}
