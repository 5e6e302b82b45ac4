import http from 'node:http';
import https from 'node:https';
import type { WebhooksConfig } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { TargetRefused, guardedLookup, literalRefusal } from './target';

/** What an attempt came to, as webhook_attempt.outcome keeps it. */
export type AttemptOutcome = 'succeeded' | 'failed' | 'gone' | 'timeout' | 'unreachable' | 'refused';

export interface AttemptResult {
  outcome: AttemptOutcome;
  status: number | null;
  /** The first RESPONSE_PREFIX characters of the answer's body, for the attempts list. */
  body: string | null;
  error: string | null;
  durationMs: number;
  /** The receiver asked to be left alone (429, 502, 503, 504): for how long, if its `Retry-After` said; else null. */
  throttle?: { retryAfterMs: number | null };
}

/** The answers that say "slow down" (Standard Webhooks' guidance), with or without a `Retry-After`. */
const THROTTLING = new Set([429, 502, 503, 504]);

/** `Retry-After` as seconds or as an HTTP date (RFC 9110 10.2.3); null when absent or unreadable. */
function retryAfterMs(value: string | undefined): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** What is kept of an answer's body: enough to recognise an error page, not a store of the receiver's data. */
const RESPONSE_PREFIX = 512;
/** What is read of an answer at most; a longer one is cut off (the connection is then not reused). */
const READ_LIMIT = 64 * 1024;

/**
 * Sends one signed POST, following no redirect (a 3xx is a failure: a receiver that moved says so by changing its
 * endpoint), within `timeoutMs` from connecting to the answer's last byte read. Keep-alive connections per process.
 */
export class WebhookSender {
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly lookup;

  constructor(private readonly config: WebhooksConfig, private readonly log: Logger) {
    this.lookup = guardedLookup(config);
    const options = { keepAlive: true, maxSockets: config.concurrency, lookup: this.lookup };
    this.agents = { http: new http.Agent(options), https: new https.Agent(options) };
  }

  send(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    const started = performance.now();
    const done = (r: Omit<AttemptResult, 'durationMs'>): AttemptResult => ({ ...r, durationMs: Math.round(performance.now() - started) });
    const refusal = literalRefusal(url, this.config);
    if (refusal) return Promise.resolve(done(this.refused(refusal)));
    return new Promise((resolve) => {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      const request = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? this.agents.https : this.agents.http,
        lookup: this.lookup,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'TenderBFF-Webhooks/1' },
        signal: AbortSignal.timeout(this.config.timeoutMs),
      }, (response) => {
        const chunks: Buffer[] = [];
        let read = 0;
        const finish = () => {
          const status = response.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_PREFIX);
          const outcome: AttemptOutcome = status >= 200 && status < 300 ? 'succeeded' : status === 410 ? 'gone' : 'failed';
          const throttle = THROTTLING.has(status) ? { retryAfterMs: retryAfterMs(response.headers['retry-after']) } : undefined;
          resolve(done({ outcome, status, body: text || null, error: outcome === 'failed' ? `answered ${status}` : null, throttle }));
        };
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read <= READ_LIMIT) chunks.push(chunk);
          else {
            response.destroy();
            finish();
          }
        });
        response.on('end', finish);
        response.on('error', () => finish());
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        if (err instanceof TargetRefused) resolve(done(this.refused(err)));
        else if (err.name === 'TimeoutError' || err.name === 'AbortError') {
          resolve(done({ outcome: 'timeout', status: null, body: null, error: `no complete answer within ${this.config.timeoutMs} ms` }));
        } else resolve(done({ outcome: 'unreachable', status: null, body: null, error: err.code ?? err.message }));
      });
      request.end(body);
    });
  }

  /**
   * A refusal as the attempts list shows it to the endpoint's organization: TargetRefused's one message, never what the
   * host resolved to, which goes to the log.
   */
  private refused(err: TargetRefused): Omit<AttemptResult, 'durationMs'> {
    this.log.warn({ target: err.detail }, 'webhooks: an attempt was not sent: its URL does not reach a public address');
    return { outcome: 'refused', status: null, body: null, error: err.message };
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
