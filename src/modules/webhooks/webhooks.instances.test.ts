import { DEMO_IDS } from '../../seed/demo-data';
import { freshDatabase, startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { queryRows } from '../../../test/support/databases';
import { startInstanceProcess, type InstanceProcess } from '../../../test/support/instance-process';
import { WebhookReceiver, registerWebhook, verified } from '../../../test/support/webhook-receiver';

/**
 * Delivery by several instances of the service on one database (docs/webhooks.md, "Delivery"): each instance
 * other than the test's own is a process of its own, so that nothing but the database is shared, and one of them
 * is killed with SIGKILL in the middle of an attempt.
 */

const ORG = DEMO_IDS.organizations;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The succeeded attempts an instance counted (its /metrics, served on its own port outside production). */
async function succeededOn(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^webhook_attempts_total\{outcome="succeeded"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

/** `count` answers of one document inserted by plain SQL, `perTransaction` per transaction; the first version number. */
async function insertAnswers(databaseUrl: string, documentId: string, count: number, perTransaction: number, from = 1000): Promise<void> {
  for (let first = from; first < from + count; first += perTransaction) {
    await queryRows(databaseUrl, `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, sent_at)
      select gen_random_uuid(), now(), now(), $1, g, 'ANSWERED', g, now() from generate_series($2::int, $3::int) g`,
    [documentId, first, Math.min(first + perTransaction, from + count) - 1]);
  }
}

const createEndpoint = (url: string, token: string, target: string) =>
  registerWebhook(url, token, { organizationId: ORG.atelierDemo, url: target, eventTypes: ['contractor.answered'] });

describe('delivery by several instances', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterAll(() => receiver.close());

  it('two instances on one database deliver 1,000 events, each attempt sent by one of them only', async () => {
    const a: TestApp = await startTestApp({ WEBHOOK_POLL_INTERVAL: '100ms', WEBHOOK_CONCURRENCY: '8' });
    let b: InstanceProcess | null = null;
    try {
      b = await startInstanceProcess(a.databaseUrl, a.config.publicUrl, { WEBHOOK_POLL_INTERVAL: '100ms', WEBHOOK_CONCURRENCY: '8' });
      const { secret } = await createEndpoint(a.url, await tokenFor(a.url, 'architect@demo.test'), `${receiver.url}/shared`);
      // A little time per answer, so that both instances have attempts in flight at once.
      receiver.answer = async () => {
        await sleep(Math.random() * 4);
        return 200;
      };
      await insertAnswers(a.databaseUrl, DEMO_IDS.documents.schoolDemolitionPetit, 1000, 100);
      await receiver.until(() => new Set(receiver.at('/shared').map((r) => r.id)).size === 1000, 60000, '1,000 distinct events');
      await sleep(500);

      const got = receiver.at('/shared');
      expect(got.length).toBe(1000);
      for (const r of got.slice(0, 20)) expect(verified(secret, r).type).toBe('contractor.answered');
      const [{ attempts, succeeded }] = await queryRows<{ attempts: number; succeeded: number }>(a.databaseUrl, `select
        (select count(*)::int from webhook_attempt) as attempts, (select count(*)::int from webhook_delivery where status = 'succeeded') as succeeded`);
      expect({ attempts, succeeded }).toEqual({ attempts: 1000, succeeded: 1000 });
      const [byA, byB] = await Promise.all([succeededOn(a.url), succeededOn(b.url)]);
      expect(byA + byB).toBe(1000);
      expect(byA).toBeGreaterThan(0);
      expect(byB).toBeGreaterThan(0);
    } finally {
      await b?.stop();
      await a.close();
    }
  }, 120000);

  it('delivers, after a restart, the event whose attempt was in flight when its instance was killed (SIGKILL)', async () => {
    const db = await freshDatabase('webhooks-kill');
    const env = { WEBHOOK_POLL_INTERVAL: '100ms', WEBHOOK_TIMEOUT: '1s' };
    let first: InstanceProcess | null = null;
    let second: InstanceProcess | null = null;
    try {
      first = await startInstanceProcess(db.url, 'http://127.0.0.1:1', env);
      const { id, secret } = await createEndpoint(first.url, await tokenFor(first.url, 'architect@demo.test'), `${receiver.url}/killed`);
      // The first attempt is never answered: the instance dies while it waits.
      let release: () => void = () => undefined;
      receiver.answer = (path, nth) => (path === '/killed' && nth === 1 ? new Promise<number>((resolve) => { release = () => resolve(200); }) : 200);
      await insertAnswers(db.url, DEMO_IDS.documents.schoolDemolitionMoreau, 1, 1);
      await receiver.until(() => receiver.at('/killed').length === 1);
      first.proc.kill('SIGKILL');
      await new Promise((resolve) => first!.proc.once('exit', resolve));
      release();

      second = await startInstanceProcess(db.url, 'http://127.0.0.1:1', env);
      // Due again once the dead instance's lease runs out (WEBHOOK_TIMEOUT + 5 s).
      await receiver.until(() => receiver.at('/killed').length === 2, 20000, 'the redelivery');
      const [before, after] = receiver.at('/killed');
      expect(after.id).toBe(before.id);
      expect(verified(secret, after).type).toBe('contractor.answered');
      let delivery: { status: string; attempts: number } | undefined;
      for (let i = 0; i < 40 && delivery?.status !== 'succeeded'; i++) {
        await sleep(50);
        [delivery] = await queryRows<{ status: string; attempts: number }>(db.url, 'select status, attempts from webhook_delivery where endpoint_id = $1', [id]);
      }
      expect(delivery).toEqual({ status: 'succeeded', attempts: 2 });
    } finally {
      if (first && first.proc.exitCode === null && first.proc.signalCode === null) first.proc.kill('SIGKILL');
      await second?.stop();
      await db.drop();
    }
  }, 60000);
});
