import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppContext, AppMiddleware } from './state';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError, ValidationError } from '../errors/errors';

/**
 * `Idempotency-Key` (README "Retrying writes"; the IETF httpapi draft, as Stripe does it): a write sent with a key
 * runs in one transaction that also stores its answer under the caller and the key, so that the write and its
 * answer commit together or not at all. A retry with the same key:
 *
 * - after the first committed, with the same request (method, path and query, body): the stored answer, with
 *   `Idempotent-Replayed: true`, and nothing written;
 * - with another request: 422;
 * - while the first still runs, on any instance (a transaction-scoped advisory lock on caller and key): 409 with
 *   `Retry-After`, at once;
 * - after the first failed (validation, a conflict, a fault: anything but a success): run as new, since the
 *   failure stored nothing.
 *
 * Answers are kept for IDEMPOTENCY_KEY_TTL_SECONDS (24 hours by default); past that a key is free again.
 */

const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
const REPLAYED_HEADER = 'Idempotent-Replayed';
const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** Visible ASCII: what a header value can carry unchanged through every proxy. */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** Key space of the advisory locks of keys in flight (PostgreSQL's two-key form; the second is caller and key hashed). */
const IDEMPOTENCY_LOCKS = 0x4944_4b00;
/** What a retry that came too early is told to wait: the first request is running and usually ends within it. */
const IN_FLIGHT_RETRY_AFTER_S = 1;
/** Expired keys are deleted by whichever instance meets a keyed write, at most this often. */
const PURGE_EVERY_MS = 60_000;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** JSON with object keys in one order: the same body sent again hashes the same, however its keys were ordered. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What identifies a request under its key: method, path with query, body. */
function requestHash(method: string, url: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${url}\n${canonical(body ?? null)}`).digest('hex');
}

interface StoredAnswer {
  request_hash: string;
  status: number;
  content_type: string | null;
  body: string;
}

/** Thrown inside the transaction to roll it back while the answer already written stays as it is. */
class NotStored {}

export interface IdempotencyOptions {
  ttlSeconds: number;
  /** Whether this request is a write the key applies to (GraphQL: a mutation); every write method by default. */
  applies?(ctx: AppContext): boolean;
  /**
   * Whether the answer written by the layers below is a success to keep; a GraphQL answer with errors is not, and
   * is given back here as it should be sent (nothing of it was kept). Default: a 2xx status.
   */
  succeeded?(ctx: AppContext): boolean;
}

/** Runs the layers below under the request's `Idempotency-Key`, when it has one (see above). Needs the caller. */
export function idempotency(options: IdempotencyOptions): AppMiddleware {
  let purgedAt = 0;
  const purge = (em: EntityManager) => {
    if (Date.now() - purgedAt < PURGE_EVERY_MS) return;
    purgedAt = Date.now();
    void em.fork().getConnection().execute('delete from idempotency_key where expires_at < now()').catch(() => {
      purgedAt = 0;
    });
  };
  return async (ctx, next) => {
    const key = ctx.get(IDEMPOTENCY_KEY_HEADER);
    if (!key || !WRITE_METHODS.has(ctx.method) || (options.applies && !options.applies(ctx))) return next();
    if (!KEY.test(key)) {
      throw new ValidationError([{ field: IDEMPOTENCY_KEY_HEADER, message: `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters` }],
        `The ${IDEMPOTENCY_KEY_HEADER} header must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters`);
    }
    const userId = ctx.state.caller!.userId;
    const hash = requestHash(ctx.method, ctx.url, ctx.request.body);
    const em = ctx.state.em;
    purge(em);
    try {
      await em.transactional(async (trx) => {
        const [{ locked }] = await trx.execute<Array<{ locked: boolean }>>(
          'select pg_try_advisory_xact_lock(?, hashtext(?)) as locked', [IDEMPOTENCY_LOCKS, `${userId}:${key}`]);
        if (!locked) throw new IdempotencyKeyInUseError(`A request with this ${IDEMPOTENCY_KEY_HEADER} is still running: try again shortly`, IN_FLIGHT_RETRY_AFTER_S);
        const [stored] = await trx.execute<StoredAnswer[]>(
          'select request_hash, status, content_type, body from idempotency_key where user_id = ? and key = ? and expires_at > now()', [userId, key]);
        if (stored) {
          if (stored.request_hash !== hash) {
            throw new IdempotencyKeyReusedError(`This ${IDEMPOTENCY_KEY_HEADER} was used for another request (method, path or body): use a new key for a new request`);
          }
          ctx.status = stored.status;
          if (stored.status !== 204) {
            ctx.body = stored.body;
            ctx.type = stored.content_type ?? 'application/json';
          }
          ctx.set(REPLAYED_HEADER, 'true');
          return;
        }
        ctx.state.em = trx;
        try {
          await next();
        } finally {
          ctx.state.em = em;
        }
        const ok = options.succeeded ? options.succeeded(ctx) : ctx.status >= 200 && ctx.status < 300;
        if (!ok) throw new NotStored();
        const body = ctx.body === undefined || ctx.body === null ? ''
          : typeof ctx.body === 'string' ? ctx.body
            : Buffer.isBuffer(ctx.body) ? ctx.body.toString('utf8')
              : JSON.stringify(ctx.body);
        await trx.execute(`insert into idempotency_key (user_id, key, request_hash, method, path, status, content_type, body, expires_at)
          values (?, ?, ?, ?, ?, ?, ?, ?, now() + make_interval(secs => ?))
          on conflict (user_id, key) do update set request_hash = excluded.request_hash, method = excluded.method, path = excluded.path,
            status = excluded.status, content_type = excluded.content_type, body = excluded.body, created_at = now(), expires_at = excluded.expires_at`,
        [userId, key, hash, ctx.method, ctx.path, ctx.status, ctx.response.get('Content-Type') || null, body, options.ttlSeconds]);
      });
    } catch (err) {
      if (!(err instanceof NotStored)) throw err;
    }
  };
}
