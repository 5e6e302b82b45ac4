import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { queryRows } from '../../../test/support/databases';
import { request } from '../../../test/support/http';
import { startInstanceProcess, type InstanceProcess } from '../../../test/support/instance-process';
import { Tarpit } from '../../../test/support/tarpit';
import { WebhookReceiver, registerWebhook } from '../../../test/support/webhook-receiver';

/**
 * One tenant cannot slow down another's webhooks (issue 40, docs/webhooks.md "Fairness"): real receivers on loopback,
 * a tarpit that accepts and never answers, and the service's defaults for the other limits (the instance's attempts in
 * flight, the breaker, the manual sends), with attempts bounded to 3 s and retries 1 s, 2 s, ... apart so that
 * a retry happens within the test.
 */

const ORG = DEMO_IDS.organizations;
const SCHEDULE_MS = [1000, 2000, 4000, 8000, 16000, 32000];
/** Shares smaller than the defaults (64, 128), so that 120 deliveries to 12 endpoints fill them. */
const PER_ENDPOINT = 8;
const PER_ORGANIZATION = 32;
const ENV = {
  WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: String(PER_ENDPOINT), WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION: String(PER_ORGANIZATION),
  WEBHOOK_TIMEOUT: '3s', WEBHOOK_RETRY_SCHEDULE: SCHEDULE_MS.map((ms) => `${ms}ms`).join(','), WEBHOOK_POLL_INTERVAL: '100ms',
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let receiver: WebhookReceiver;
let tarpit: Tarpit;
beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  tarpit = await new Tarpit().start();
});
afterAll(async () => {
  await receiver.close();
  await tarpit.close();
});

const sendTest = (t: TestApp, token: string, webhookId: string) =>
  request(t.url, 'POST', `/api/svc/v1/webhooks/${webhookId}/test`, { token });

/**
 * Organization A (Atelier Demo): 12 endpoints on the tarpit, 10 test events each. Organization B (Atelier Nord): one
 * endpoint on a receiver answering at once, a test event every 400 ms meanwhile. The delays of B's events, from the
 * 202 to their arrival.
 */
async function flood(t: TestApp, label: string): Promise<{ delays: number[]; tarpitIds: string[] }> {
  const token = await tokenFor(t.url, 'architect@demo.test');
  const tarpitIds: string[] = [];
  for (let i = 0; i < 12; i++) {
    tarpitIds.push((await registerWebhook(t.url, token, { organizationId: ORG.atelierDemo, url: `${tarpit.url}/${label}/${i}`, eventTypes: ['project.archived'] })).id);
  }
  const other = await registerWebhook(t.url, token, { organizationId: ORG.atelierNord, url: `${receiver.url}/${label}/other`, eventTypes: ['project.archived'] });
  // 120 test events, 6 requests at a time (the API's admission control refuses a burst of 120 at once, with 503).
  const statuses: number[] = [];
  const sends = tarpitIds.flatMap((id) => Array<string>(10).fill(id));
  for (let i = 0; i < sends.length; i += 6) {
    statuses.push(...(await Promise.all(sends.slice(i, i + 6).map((id) => sendTest(t, token, id)))).map((r) => r.status));
  }
  expect(statuses).toEqual(Array(120).fill(202));

  const delays: number[] = [];
  for (let i = 0; i < 15; i++) {
    const res = await sendTest(t, token, other.id);
    expect(res.status).toBe(202);
    const sent = Date.now();
    const eventId = res.body.event.id as string;
    await receiver.until(() => receiver.received.some((r) => r.id === eventId), 10000, `the other organization's event ${i}`);
    delays.push(receiver.received.find((r) => r.id === eventId)!.at - sent);
    await sleep(400);
  }
  return { delays, tarpitIds };
}

/** Every delivery to the tarpit still pending (kept), and no retry before its schedule (jitter: a fifth less at most). */
async function checkKeptAndScheduled(databaseUrl: string, tarpitIds: string[]): Promise<void> {
  const deliveries = await queryRows<{ status: string; n: number }>(databaseUrl, `select status, count(*)::int as n from webhook_delivery
    where endpoint_id = any($1::uuid[]) group by status`, [tarpitIds]);
  expect(deliveries).toEqual([{ status: 'pending', n: 120 }]);
  // Wait for retries to have happened, so that the schedule is checked on some.
  let retried = 0;
  for (let i = 0; i < 100 && retried < 12; i++) {
    [{ retried }] = await queryRows<{ retried: number }>(databaseUrl, `select count(*)::int as retried from webhook_attempt
      where endpoint_id = any($1::uuid[]) and attempt >= 2`, [tarpitIds]);
    if (retried < 12) await sleep(200);
  }
  expect(retried).toBeGreaterThanOrEqual(12);
  const attempts = await queryRows<{ delivery_id: string; attempt: number; started: number; ended: number }>(databaseUrl, `select delivery_id, attempt,
      extract(epoch from attempted_at) * 1000 as started, extract(epoch from attempted_at) * 1000 + duration_ms as ended
    from webhook_attempt where endpoint_id = any($1::uuid[]) order by delivery_id, attempt`, [tarpitIds]);
  let checked = 0;
  for (let i = 1; i < attempts.length; i++) {
    const [before, after] = [attempts[i - 1], attempts[i]];
    if (before.delivery_id !== after.delivery_id) continue;
    expect(after.attempt).toBe(before.attempt + 1);
    // The retry's wait counts from the recorded answer, which comes after the attempt's end.
    expect(Number(after.started)).toBeGreaterThanOrEqual(Number(before.ended) + 0.8 * SCHEDULE_MS[before.attempt - 1] - 5);
    checked++;
  }
  expect(checked).toBeGreaterThanOrEqual(12);
}

describe('fair delivery between organizations', () => {
  it('delivers another organization\'s events within 2 s while one organization\'s 12 endpoints are on a tarpit, keeping every tarpit delivery on its schedule', async () => {
    const t = await startTestApp(ENV);
    try {
      tarpit.resetPeaks();
      const { delays, tarpitIds } = await flood(t, 'one');
      expect(Math.max(...delays)).toBeLessThan(2000);
      // The tenant's share: its attempts in flight, all endpoints together, and per endpoint.
      expect(tarpit.peak).toBeLessThanOrEqual(PER_ORGANIZATION);
      expect(tarpit.peak).toBeGreaterThan(0);
      for (const peak of tarpit.peakByPath.values()) expect(peak).toBeLessThanOrEqual(PER_ENDPOINT);
      await checkKeptAndScheduled(t.databaseUrl, tarpitIds);
    } finally {
      await t.close();
    }
  }, 90000);

  it('holds the same shares with two instances: the limits count every instance\'s attempts in flight', async () => {
    const t = await startTestApp(ENV);
    let b: InstanceProcess | null = null;
    try {
      b = await startInstanceProcess(t.databaseUrl, t.config.publicUrl, ENV);
      tarpit.resetPeaks();
      const { delays, tarpitIds } = await flood(t, 'two');
      expect(Math.max(...delays)).toBeLessThan(2000);
      // Counted per instance, the tenant would hold a share on each: 64.
      expect(tarpit.peak).toBeLessThanOrEqual(PER_ORGANIZATION);
      expect(tarpit.peak).toBeGreaterThan(PER_ORGANIZATION / 2);
      await checkKeptAndScheduled(t.databaseUrl, tarpitIds);
    } finally {
      await b?.stop();
      await t.close();
    }
  }, 90000);
});

describe('circuit breaker', () => {
  it('gives an endpoint that keeps timing out one attempt in flight at a time, and all of them again once one succeeds', async () => {
    const t = await startTestApp({ ...ENV, WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '16', WEBHOOK_TIMEOUT: '1s', WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms' });
    try {
      const token = await tokenFor(t.url, 'architect@demo.test');
      const { id } = await registerWebhook(t.url, token, { organizationId: ORG.atelierDemo, url: `${tarpit.url}/breaker`, eventTypes: ['project.archived'] });
      // Ten events at once; their first attempts time out together: 10 failures in a row, past the 5 that open it.
      expect((await Promise.all(Array.from({ length: 10 }, () => sendTest(t, token, id)))).map((r) => r.status)).toEqual(Array(10).fill(202));
      const deadline = Date.now() + 15000;
      while (tarpit.arrivals.filter((a) => a.path === '/breaker').length < 10 && Date.now() < deadline) await sleep(20);
      // Before the breaker opens, several at once (on a loaded machine the first may time out before the last is sent).
      expect(tarpit.peakByPath.get('/breaker')).toBeGreaterThanOrEqual(5);
      let failures = 0;
      while ((failures < 10 || tarpit.held('/breaker') > 1) && Date.now() < deadline + 5000) {
        await sleep(50);
        [{ consecutive_failures: failures }] = await queryRows<{ consecutive_failures: number }>(t.databaseUrl,
          'select consecutive_failures from webhook_endpoint where id = $1', [id]);
      }
      expect(failures).toBeGreaterThanOrEqual(10);
      tarpit.resetPeaks();
      const before = tarpit.arrivals.filter((a) => a.path === '/breaker').length;
      await sleep(3500);
      // Probes, one at a time: a few attempts in 3.5 s (1 s each, 200 ms apart), never two held at once.
      expect(tarpit.arrivals.filter((a) => a.path === '/breaker').length).toBeGreaterThan(before);
      expect(tarpit.peakByPath.get('/breaker')).toBe(1);
      const [{ pending }] = await queryRows<{ pending: number }>(t.databaseUrl, `select count(*)::int as pending from webhook_delivery
        where endpoint_id = $1 and status = 'pending'`, [id]);
      expect(pending).toBe(10);

      tarpit.release('/breaker');
      let succeeded = 0;
      for (let i = 0; i < 100 && succeeded < 10; i++) {
        await sleep(100);
        [{ succeeded }] = await queryRows<{ succeeded: number }>(t.databaseUrl, `select count(*)::int as succeeded from webhook_delivery
          where endpoint_id = $1 and status = 'succeeded'`, [id]);
      }
      expect(succeeded).toBe(10);
      const [endpoint] = await queryRows<{ consecutive_failures: number }>(t.databaseUrl, 'select consecutive_failures from webhook_endpoint where id = $1', [id]);
      expect(endpoint.consecutive_failures).toBe(0);
    } finally {
      await t.close();
    }
  }, 60000);
});

/** Once the endpoint's first attempt is recorded (its answer known to the service). */
async function answered(t: TestApp, webhookId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const [{ n }] = await queryRows<{ n: number }>(t.databaseUrl, 'select count(*)::int as n from webhook_attempt where endpoint_id = $1', [webhookId]);
    if (n > 0) return;
    await sleep(20);
  }
  throw new Error('the first attempt was not recorded');
}

describe('throttling answers', () => {
  it('does not call a receiver that answered 429 with Retry-After: 3 again before 3 s', async () => {
    const t = await startTestApp({ ...ENV, WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms' });
    try {
      const token = await tokenFor(t.url, 'architect@demo.test');
      receiver.answer = (path, nth) => (path === '/throttled' && nth === 1 ? { status: 429, headers: { 'retry-after': '3' } } : 200);
      const { id } = await registerWebhook(t.url, token, { organizationId: ORG.atelierDemo, url: `${receiver.url}/throttled`, eventTypes: ['project.archived'] });
      expect((await sendTest(t, token, id)).status).toBe(202);
      await answered(t, id);
      // Another event once the 429 is answered: queued, not sent while the endpoint is paused.
      expect((await sendTest(t, token, id)).status).toBe(202);
      await receiver.until(() => receiver.at('/throttled').length === 3, 10000);
      const [first, ...later] = receiver.at('/throttled');
      for (const r of later) expect(r.at - first.at).toBeGreaterThanOrEqual(3000);
      expect(new Set(receiver.at('/throttled').map((r) => r.id)).size).toBe(2);
    } finally {
      receiver.answer = () => 200;
      await t.close();
    }
  }, 30000);

  it.each([502, 503, 504])('pauses an endpoint that answered %i without Retry-After for the schedule\'s first wait', async (status) => {
    const t = await startTestApp({ ...ENV, WEBHOOK_RETRY_SCHEDULE: '1500ms,50ms,50ms' });
    try {
      const token = await tokenFor(t.url, 'architect@demo.test');
      const path = `/paused-${status}`;
      receiver.answer = (p, nth) => (p === path && nth === 1 ? status : 200);
      const { id } = await registerWebhook(t.url, token, { organizationId: ORG.atelierDemo, url: `${receiver.url}${path}`, eventTypes: ['project.archived'] });
      expect((await sendTest(t, token, id)).status).toBe(202);
      await answered(t, id);
      expect((await sendTest(t, token, id)).status).toBe(202);
      await receiver.until(() => receiver.at(path).length === 3, 10000);
      const [first, ...later] = receiver.at(path);
      for (const r of later) expect(r.at - first.at).toBeGreaterThanOrEqual(0.8 * 1500);
    } finally {
      receiver.answer = () => 200;
      await t.close();
    }
  }, 30000);
});

describe('POST /webhooks/{webhook_id}/test and .../redeliver', () => {
  it('answers 429 with Retry-After past WEBHOOK_MANUAL_SENDS_PER_MINUTE per endpoint, test events and redeliveries together', async () => {
    const t = await startTestApp({ ...ENV, WEBHOOK_MANUAL_SENDS_PER_MINUTE: '3' });
    try {
      const token = await tokenFor(t.url, 'architect@demo.test');
      const { id } = await registerWebhook(t.url, token, { organizationId: ORG.atelierDemo, url: `${receiver.url}/manual`, eventTypes: ['project.archived'] });
      const { id: otherId } = await registerWebhook(t.url, token, { organizationId: ORG.atelierDemo, url: `${receiver.url}/manual-other`, eventTypes: ['project.archived'] });
      expect((await sendTest(t, token, id)).status).toBe(202);
      expect((await sendTest(t, token, id)).status).toBe(202);
      await receiver.until(() => receiver.at('/manual').length === 2);
      let attempts: Array<{ id: string }> = [];
      for (let i = 0; i < 50 && attempts.length < 2; i++) {
        await sleep(50);
        attempts = (await request(t.url, 'GET', `/api/svc/v1/webhooks/${id}/attempts`, { token })).body.attempts;
      }
      const redelivered = await request(t.url, 'POST', `/api/svc/v1/webhooks/${id}/attempts/${attempts[0].id}/redeliver`, { token });
      expect(redelivered.status).toBe(202);
      const refused = await sendTest(t, token, id);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ code: 429, message: 'At most 3 test events and redeliveries per webhook per minute' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      const refusedRedelivery = await request(t.url, 'POST', `/api/svc/v1/webhooks/${id}/attempts/${attempts[0].id}/redeliver`, { token });
      expect(refusedRedelivery.status).toBe(429);
      // Nothing queued by the refusals; another endpoint has its own count.
      const [{ events }] = await queryRows<{ events: number }>(t.databaseUrl, `select count(*)::int as events from webhook_delivery where endpoint_id = $1`, [id]);
      expect(events).toBe(2);
      expect((await sendTest(t, token, otherId)).status).toBe(202);
    } finally {
      await t.close();
    }
  }, 30000);
});
