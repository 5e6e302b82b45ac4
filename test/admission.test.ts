import { DEMO_IDS } from '../src/seed/demo-ids';
import { ServiceUnavailableError, TooManyRequestsError } from '../src/platform/errors/errors';
import { Admission, COST_CLASSES, type ClassLimits, type CostClass } from '../src/platform/http/admission';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request } from './support/http';
import { expectServiceUnavailable } from './support/retry-later';
import { holdProjectWrites } from './support/project-lock';

/** Every class with `limits`, but those given. */
function admissionOf(limits: Partial<ClassLimits>, own: Partial<Record<CostClass, Partial<ClassLimits>>> = {}): Admission {
  const base: ClassLimits = { concurrency: 1, queue: 10, maxWaitMs: 10_000, lifoAfterMs: 0, ...limits };
  return new Admission(Object.fromEntries(COST_CLASSES.map((c) => [c, { ...base, ...own[c] }])) as Record<CostClass, ClassLimits>);
}

const settled = (p: Promise<unknown>) => p.then(() => 'admitted', (err) => err);

describe('admission control (src/platform/http/admission.ts)', () => {
  it('runs at most its class\'s concurrency at once, and a full class holds no other class', async () => {
    const admission = admissionOf({ concurrency: 1 });
    const release = await admission.enter('rest-read');
    const waiting = admission.enter('rest-read');
    // Another class has its own turns.
    (await admission.enter('graphql'))();
    (await admission.enter('rest-write'))();
    expect(admission.loads().classes['rest-read']).toMatchObject({ running: 1, waiting: 1 });
    release();
    (await waiting)();
    expect(admission.loads().classes['rest-read']).toMatchObject({ running: 0, waiting: 0 });
  });

  it('refuses at once, with 503 and Retry-After, a request that finds its class\'s queue full', async () => {
    const admission = admissionOf({ concurrency: 1, queue: 1 });
    const release = await admission.enter('graphql');
    const queued = admission.enter('graphql');
    const refused = await settled(admission.enter('graphql'));
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect((refused as ServiceUnavailableError).retryAfterSeconds).toBe(1);
    expect((refused as Error).message).toMatch(/too many graphql requests are waiting/);
    release();
    (await queued)();
  });

  it('refuses a request that waited its class\'s longest wait, and frees its place', async () => {
    const admission = admissionOf({ concurrency: 1, maxWaitMs: 50 });
    const release = await admission.enter('rest-write');
    const refused = await settled(admission.enter('rest-write'));
    expect((refused as Error).message).toMatch(/waited 50 ms for its turn/);
    expect(admission.loads().classes['rest-write'].waiting).toBe(0);
    release();
  });

  it('serves in arrival order, and with adaptive LIFO on, newest first once its oldest has stood past lifoAfterMs', async () => {
    const order: string[] = [];
    const admission = admissionOf({ concurrency: 1, lifoAfterMs: 30 });
    const take = (name: string) => admission.enter('rest-read').then((release) => { order.push(name); return release; });
    const first = await take('first');
    const a = take('a');
    const b = take('b');
    first();
    (await a)();
    (await b)();
    expect(order).toEqual(['first', 'a', 'b']);

    const held = await take('held');
    const old = take('old');
    await new Promise((r) => setTimeout(r, 60));
    const newer = take('newer');
    const newest = take('newest');
    held();
    (await newest)();
    (await newer)();
    (await old)();
    expect(order.slice(3)).toEqual(['held', 'newest', 'newer', 'old']);
  });

  it('tells its load: the share of each class\'s capacity in use, and the highest', async () => {
    const admission = admissionOf({ concurrency: 1, queue: 3 });
    const release = await admission.enter('graphql');
    const waiting = admission.enter('graphql');
    expect(admission.loads()).toMatchObject({ load: 0.5, classes: { graphql: { running: 1, waiting: 1, load: 0.5 }, 'rest-read': { load: 0 } } });
    release();
    (await waiting)();
  });
});

describe('a caller\'s share of a class (perCaller: GraphQL)', () => {
  const shared = (concurrency: number, perCaller: { concurrency: number; queue: number }) =>
    admissionOf({ concurrency, queue: 10 }, { graphql: { perCaller } });

  it('refuses at once with 429 a caller\'s request beyond its share running and waiting, and not another caller\'s', async () => {
    const admission = shared(2, { concurrency: 1, queue: 1 });
    const running = await admission.enter('graphql', 'a');
    const waiting = admission.enter('graphql', 'a');
    const refused = await settled(admission.enter('graphql', 'a'));
    expect(refused).toBeInstanceOf(TooManyRequestsError);
    expect([(refused as TooManyRequestsError).status, (refused as TooManyRequestsError).retryAfterSeconds]).toEqual([429, 1]);
    expect((refused as Error).message).toMatch(/at most 1 run and 1 wait/);
    // b is under its share: the class's second turn is its own at once, although a's request waits.
    (await admission.enter('graphql', 'b'))();
    running();
    (await waiting)();
    expect(admission.loads().classes.graphql).toMatchObject({ running: 0, waiting: 0 });
  });

  it('gives a freed turn to the waiter whose caller has the fewest running, not to the oldest of a caller who holds the others', async () => {
    const order: string[] = [];
    const admission = shared(2, { concurrency: 2, queue: 5 });
    const take = (caller: string, name: string) => admission.enter('graphql', caller).then((release) => { order.push(name); return release; });
    const a1 = await take('a', 'a1');
    const a2 = await take('a', 'a2');
    const a3 = take('a', 'a3');
    const a4 = take('a', 'a4');
    const b1 = take('b', 'b1');
    a1();
    (await b1)();
    a2();
    (await a3)();
    (await a4)();
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  });

  it('refuses at once a caller\'s request that, behind its own at the pace its turns have lasted, would wait past the longest wait', async () => {
    const admission = admissionOf({ concurrency: 2, queue: 10, maxWaitMs: 100 }, { graphql: { perCaller: { concurrency: 1, queue: 5 } } });
    // One turn of 60 ms sets the pace.
    const first = await admission.enter('graphql', 'a');
    await new Promise((r) => setTimeout(r, 60));
    first();
    const running = await admission.enter('graphql', 'a');
    const waits = admission.enter('graphql', 'a');
    const refused = await settled(admission.enter('graphql', 'a'));
    expect(refused).toBeInstanceOf(TooManyRequestsError);
    expect((refused as Error).message).toMatch(/its operations take about \d+ ms each, one more would wait past 100 ms/);
    // Another caller, with no pace yet, is not concerned.
    (await admission.enter('graphql', 'b'))();
    running();
    (await waits)();
  });

  it('forgets a caller with nothing running or waiting (the map holds the callers of the moment)', async () => {
    const admission = shared(1, { concurrency: 1, queue: 1 });
    for (let i = 0; i < 1000; i++) (await admission.enter('graphql', `caller ${i}`))();
    const queue = (admission as unknown as { classes: Map<string, { callers: Map<string, unknown> }> }).classes.get('graphql')!;
    expect(queue.callers.size).toBe(0);
  });
});

describe('admission of REST and GraphQL requests', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp({ REST_MAX_CONCURRENT_WRITES: '1', ADMISSION_QUEUE_LENGTH: '0', DATABASE_LOCK_TIMEOUT_MS: '5000' });
    token = await tokenFor(t.url, 'architect@demo.test');
  });
  afterAll(() => t?.close());

  it('answers a write that finds its class full 503 + Retry-After at once in REST\'s shape, while reads and GraphQL are served; /loadz says overloaded', async () => {
    expect((await request(t.url, 'GET', '/loadz')).body).toMatchObject({ status: 'ok', load: 0 });
    // The one write turn is taken by a trade creation waiting for the project's lock, held here.
    const lock = await holdProjectWrites(t.databaseUrl, DEMO_IDS.projects.residence);
    try {
      const held = request(t.url, 'POST', `/api/svc/v1/projects/${DEMO_IDS.projects.residence}/trades`, { token, body: { name: 'Held', number: '91', short_name: 'HE' } });
      for (let i = 0; i < 100 && (await request(t.url, 'GET', '/loadz')).body.classes['rest-write'].running < 1; i++) await new Promise((r) => setTimeout(r, 20));
      const loadz = await request(t.url, 'GET', '/loadz');
      expect([loadz.status, loadz.body.status, loadz.body.classes['rest-write']]).toEqual([503, 'overloaded', { running: 1, waiting: 0, load: 1 }]);
      const refused = await request(t.url, 'POST', `/api/svc/v1/projects/${DEMO_IDS.projects.school}/trades`, { token, body: { name: 'Refused', number: '92', short_name: 'RE' } });
      expectServiceUnavailable(refused, 'rest');
      expect((await request(t.url, 'GET', '/api/svc/v1/projects', { token })).status).toBe(200);
      const graphql = await gql(t.url, token, '{ me { id } }');
      expect([graphql.status, graphql.body.errors]).toEqual([200, undefined]);
      await lock.release();
      expect((await held).status).toBe(201);
    } finally {
      await lock.release();
    }
    const metrics = (await request(t.url, 'GET', '/metrics')).text;
    expect(metrics).toMatch(/^admission_refusals_total\{class="rest-write",reason="queue-full"\} 1$/m);
    expect(metrics).toMatch(/^admission_wait_seconds_count\{class="rest-read"\} [1-9]/m);
  });
});
