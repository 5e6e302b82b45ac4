import Router from '@koa/router';
import { DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { KnexTimeoutError } from 'knex';
import { poolOptions, watchingConnectionCuts } from '../src/platform/database/limits';
import { ServiceUnavailableError } from '../src/platform/errors/errors';
import { toAppError } from '../src/platform/errors/database-faults';
import type { AppState } from '../src/platform/http/state';
import { startTestApp, type TestApp } from './support/app';
import { request } from './support/http';
import { expectServiceUnavailable } from './support/retry-later';

describe('database faults are 503 + Retry-After, mapped in one place (toAppError)', () => {
  const pgError = (code: string, message = 'server error') => Object.assign(new Error(message), { code });

  it.each([
    ['the pool acquire timeout (KnexTimeoutError)', new KnexTimeoutError('Knex: Timeout acquiring a connection. The pool is probably full.'), 'busy'],
    ['the pool acquire timeout wrapped by MikroORM', new DriverException(new KnexTimeoutError('Knex: Timeout acquiring a connection. The pool is probably full.')), 'busy'],
    ['statement_timeout (57014 query_canceled)', new DriverException(pgError('57014', 'canceling statement due to statement timeout')), 'busy'],
    ['lock_timeout (55P03 lock_not_available)', new DriverException(pgError('55P03', 'canceling statement due to lock timeout')), 'busy'],
    ['idle_in_transaction_session_timeout (25P03)', pgError('25P03'), 'busy'],
    ['too many connections (53300)', pgError('53300'), 'busy'],
    ['an administrator shutdown (57P01)', pgError('57P01'), 'unavailable'],
    ['a connection failure (08006)', pgError('08006'), 'unavailable'],
    ['a refused connection', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 'unavailable'],
    ['a connection that died', new Error('Connection terminated unexpectedly'), 'unavailable'],
    ['a connect timeout', new Error('timeout expired'), 'unavailable'],
    ['a server that stopped answering (client-side guard)', new Error('Query read timeout'), 'unavailable'],
    ['PgBouncer: no server connection within query_wait_timeout (08P01)', pgError('08P01', 'query_wait_timeout'), 'busy'],
    ['PgBouncer: its client limit (08P01)', pgError('08P01', 'no more connections allowed (max_client_conn)'), 'busy'],
    ['PgBouncer: a server it cannot log into (08P01)', pgError('08P01', 'server login has been failing, try again later (server_login_retry)'), 'unavailable'],
    ['PgBouncer: a server connection that died (08P01)', pgError('08P01', 'server conn crashed?'), 'unavailable'],
  ])('%s', (_what, err, kind) => {
    const mapped = toAppError(err);
    expect(mapped).toBeInstanceOf(ServiceUnavailableError);
    expect([mapped!.status, mapped!.message, (mapped as ServiceUnavailableError).retryAfterSeconds])
      .toEqual([503, `The database is ${kind}, try again shortly`, 5]);
  });

  it('leaves other database errors alone (a unique violation is not an outage)', () => {
    expect(toAppError(new UniqueConstraintViolationException(Object.assign(new Error('duplicate key'), { code: '23505' })))).toBeNull();
    expect(toAppError(new Error('select * from nowhere'))).toBeNull();
    // PostgreSQL's own protocol violation is a bug of the client, and PgBouncer's configuration errors need an operator.
    expect(toAppError(pgError('08P01', 'bind message supplies 1 parameters, but prepared statement "" requires 2'))).toBeNull();
    expect(toAppError(pgError('08P01', 'no such database: tender'))).toBeNull();
  });
});

describe("knex's 'Transaction query already complete'", () => {
  const ended = () => new Error('Transaction query already complete, run with DEBUG=knex:tx for more info');
  /** A pooled connection as the request pool sets it up, whose every statement fails with `error` (a read timeout by default). */
  function unansweringConnection(error: () => Error = () => new Error('Query read timeout')) {
    const conn = {
      readyForQuery: true,
      getTransactionStatus: () => 'I',
      query: (_config: unknown, callback: (err: Error | null) => void) => callback(error()),
      connection: { stream: { destroy: jest.fn() } },
    };
    const limits = { poolSize: 2, acquireTimeoutMs: 1000, connectTimeoutMs: 500, statementTimeoutMs: 1000, lockTimeoutMs: 500, idleInTransactionTimeoutMs: 1000 };
    (poolOptions(limits as never).pool as unknown as { afterCreate(c: unknown, done: () => void): void }).afterCreate(conn, () => undefined);
    return conn;
  }

  it('is a programming error (500) when no connection of the request was given up', () => {
    expect(toAppError(ended())).toBeNull();
    expect(watchingConnectionCuts(() => toAppError(ended()))).toBeNull();
  });

  it('is 503 when the request gave its connection up on a read timeout (its transaction ended under it)', () => {
    const mapped = watchingConnectionCuts(() => {
      const conn = unansweringConnection();
      conn.query({ text: 'BEGIN' }, () => undefined);
      expect(conn.connection.stream.destroy).toHaveBeenCalled();
      return toAppError(ended());
    });
    expect(mapped).toBeInstanceOf(ServiceUnavailableError);
    expect(mapped!.message).toBe('The database is unavailable, try again shortly');
  });

  it('is 503 when a statement of the request lost its connection before (a BEGIN whose error knex keeps to itself)', () => {
    const mapped = watchingConnectionCuts(() => {
      const conn = unansweringConnection(() => new Error('Connection terminated unexpectedly'));
      conn.query({ text: 'BEGIN;' }, () => undefined);
      return toAppError(ended());
    });
    expect(mapped).toBeInstanceOf(ServiceUnavailableError);
    expect((mapped as ServiceUnavailableError).retryAfterSeconds).toBeGreaterThan(0);
  });

  it('stays a programming error (500) when the earlier failure was not a fault (a unique violation)', () => {
    const mapped = watchingConnectionCuts(() => {
      const conn = unansweringConnection(() => Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }));
      conn.query({ text: 'insert into x values (1)' }, () => undefined);
      return toAppError(ended());
    });
    expect(mapped).toBeNull();
  });
});

describe('bounded statements and transactions', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Probe routes that exist only in this test, behind the real middleware chain and request pool.
    const probe = new Router<AppState>({ prefix: '/__probe' });
    probe.get('/quick', async (ctx) => {
      ctx.body = await ctx.state.em.getConnection().execute('select 1 as one');
    });
    probe.get('/slow', async (ctx) => {
      await ctx.state.em.getConnection().execute('select pg_sleep(3)');
      ctx.body = { done: true };
    });
    probe.post('/slow-write/:id', async (ctx) => {
      await ctx.state.em.transactional(async (em) => {
        await em.execute('insert into probe_write (id) values (?)', [ctx.params.id]);
        await em.execute('select pg_sleep(3)');
      });
      ctx.status = 201;
    });
    probe.post('/idle-write/:id', async (ctx) => {
      await ctx.state.em.transactional(async (em) => {
        await em.execute('insert into probe_write (id) values (?)', [ctx.params.id]);
        // Waits on something that is not the database (here: nothing) while holding the transaction open.
        await new Promise((r) => setTimeout(r, 600));
        await em.execute('select 1');
      });
      ctx.status = 201;
    });
    t = await startTestApp({ DATABASE_STATEMENT_TIMEOUT_MS: '300', DATABASE_LOCK_TIMEOUT_MS: '200', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '300' },
      (app) => app.koa.use(probe.routes()));
    await t.orm.em.fork().getConnection().execute('create table probe_write (id text primary key)');
  });
  afterAll(() => t?.close());

  const stored = async (id: string) => (await t.orm.em.fork().getConnection().execute('select id from probe_write where id = ?', [id])).length;

  it('never hands a connection left inside a transaction out again: the pool destroys it', async () => {
    const knex = t.orm.em.getKnex().client;
    const conn = await knex.acquireConnection();
    await conn.query('begin');
    const abandoned: number = conn.processID;
    await knex.releaseConnection(conn);
    const next = await knex.acquireConnection();
    try {
      expect(next.processID).not.toBe(abandoned);
      expect((await next.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await knex.releaseConnection(next);
    }
  });

  it('cancels a statement running past DATABASE_STATEMENT_TIMEOUT_MS: 503 + Retry-After', async () => {
    const res = await request(t.url, 'GET', '/__probe/slow', { timeoutMs: 2500 });
    expectServiceUnavailable(res, 'rest');
    expect(res.body.message).toBe('The database is busy, try again shortly');
  });

  it('rolls back a write whose statement ran out of time: nothing half-done', async () => {
    const res = await request(t.url, 'POST', '/__probe/slow-write/w1', { timeoutMs: 2500 });
    expectServiceUnavailable(res, 'rest');
    expect(await stored('w1')).toBe(0);
  });

  it('ends a transaction left idle past DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: 503 + Retry-After, nothing of it kept', async () => {
    const res = await request(t.url, 'POST', '/__probe/idle-write/w2', { timeoutMs: 2500 });
    expectServiceUnavailable(res, 'rest');
    expect(await stored('w2')).toBe(0);
    // The pool replaces the connection the server closed: the next requests are served.
    for (let i = 0; i < 3; i++) expect((await request(t.url, 'GET', '/__probe/quick')).body).toEqual([{ one: 1 }]);
  });
});
