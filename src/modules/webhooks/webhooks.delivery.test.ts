import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { queryRows } from '../../../test/support/databases';
import { request } from '../../../test/support/http';
import { WebhookReceiver, verified } from '../../../test/support/webhook-receiver';

/**
 * Delivery of webhooks (issue 26, docs/webhooks.md) to a real receiver on loopback, every delivery verified with
 * the Standard Webhooks library (`standardwebhooks`). Retries are scheduled in tens of milliseconds here.
 */

const ORG = DEMO_IDS.organizations;
const DOC = DEMO_IDS.documents;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

let t: TestApp;
let receiver: WebhookReceiver;
let architect: string;
let other: string;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  t = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms', WEBHOOK_POLL_INTERVAL: '25ms', WEBHOOK_TIMEOUT: '2s' });
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function createWebhook(path: string, eventTypes: string[], organizationId: string = ORG.atelierDemo, token = architect) {
  const res = await request(t.url, 'POST', '/api/svc/v1/webhooks', {
    token, body: { organization_id: organizationId, url: `${receiver.url}${path}`, event_types: eventTypes },
  });
  expect(res.status).toBe(201);
  return { id: res.body.webhook.id as string, secret: res.body.secret as string };
}

/** An answer (or a decline) written as the contractor portal writes it: plain SQL, not through the service. */
async function insertVersion(documentId: string, status: 'ANSWERED' | 'DECLINED', subTotal = 1000, discount = 0): Promise<string> {
  const [row] = await queryRows<{ id: string }>(t.databaseUrl, `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, sent_at)
    select gen_random_uuid(), now(), now(), $1, coalesce(max(version), 0) + 1, $2, $3, $4, now() from document_version where document_id = $1
    returning id`, [documentId, status, subTotal, discount]);
  return row.id;
}

const attemptsOf = async (webhookId: string, token = architect) =>
  (await request(t.url, 'GET', `/api/svc/v1/webhooks/${webhookId}/attempts`, { token })).body.attempts as Array<Record<string, unknown>>;

describe('delivery', () => {
  it('delivers a version inserted with plain SQL, signed per Standard Webhooks, with the figures a receiver acts on', async () => {
    const { secret } = await createWebhook('/answers', ['contractor.answered']);
    const versionId = await insertVersion(DOC.schoolDemolitionPetit, 'ANSWERED', 125000.5, 500.25);
    await receiver.until(() => receiver.at('/answers').length === 1);

    const [delivery] = receiver.at('/answers');
    const event = verified(secret, delivery);
    expect(event.type).toBe('contractor.answered');
    expect(event.timestamp).toMatch(TIMESTAMP);
    expect(event.data).toMatchObject({
      project_id: DEMO_IDS.projects.school, template_id: DEMO_IDS.templates.schoolDemolition, document_id: DOC.schoolDemolitionPetit,
      version_id: versionId, sub_total: 125000.5, discount: 500.25, amount: 124500.25,
      template_stats: expect.objectContaining({ answers: expect.any(Number), contractors: expect.any(Number) }),
    });
    const [row] = await queryRows<{ id: string }>(t.databaseUrl, 'select id from webhook_event where payload->\'data\'->>\'version_id\' = $1', [versionId]);
    expect(delivery.id).toBe(row.id);
    expect(() => verified(`whsec_${Buffer.alloc(24, 1).toString('base64')}`, delivery)).toThrow();
  });

  it('sends the same webhook-id on every retry: 500 three times, then 200, is four attempts of one event', async () => {
    const { id, secret } = await createWebhook('/flaky', ['contractor.declined']);
    receiver.answer = (path, nth) => (path === '/flaky' && nth <= 3 ? 500 : 200);
    await insertVersion(DOC.schoolDemolitionMoreau, 'DECLINED');
    await receiver.until(() => receiver.at('/flaky').length === 4);

    const deliveries = receiver.at('/flaky');
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(1);
    for (const d of deliveries) expect(verified(secret, d).type).toBe('contractor.declined');
    await receiver.until(() => false, 300).catch(() => undefined);
    expect(receiver.at('/flaky')).toHaveLength(4);
    const attempts = await attemptsOf(id);
    expect(attempts.map((a) => [a.attempt, a.outcome, a.response_status])).toEqual([
      [4, 'succeeded', 200], [3, 'failed', 500], [2, 'failed', 500], [1, 'failed', 500],
    ]);
    const webhook = (await request(t.url, 'GET', `/api/svc/v1/webhooks/${id}`, { token: architect })).body.webhook;
    expect(webhook).toMatchObject({ enabled: true, failing_since: null });
  });

  it('gives up after the schedule: the delivery is failed and the endpoint shows since when it fails', async () => {
    const { id } = await createWebhook('/down', ['contractor.declined']);
    receiver.answer = (path) => (path === '/down' ? 503 : 200);
    await insertVersion(DOC.schoolMenuiserieBernard, 'DECLINED');
    await receiver.until(() => receiver.at('/down').length === 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.at('/down')).toHaveLength(5);
    const [delivery] = await queryRows<{ status: string; attempts: number }>(t.databaseUrl, 'select status, attempts from webhook_delivery where endpoint_id = $1', [id]);
    expect(delivery).toEqual({ status: 'failed', attempts: 5 });
    const webhook = (await request(t.url, 'GET', `/api/svc/v1/webhooks/${id}`, { token: architect })).body.webhook;
    expect(webhook.failing_since).toMatch(TIMESTAMP);
    expect(webhook.enabled).toBe(true);
  });

  it('disables an endpoint that answers 410 Gone, and says why', async () => {
    const { id } = await createWebhook('/gone', ['contractor.declined']);
    receiver.answer = (path) => (path === '/gone' ? 410 : 200);
    await insertVersion(DOC.schoolMenuiserieDurand, 'DECLINED');
    await receiver.until(() => receiver.at('/gone').length === 1);
    let webhook: Record<string, unknown> = {};
    for (let i = 0; i < 50 && webhook.enabled !== false; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      webhook = (await request(t.url, 'GET', `/api/svc/v1/webhooks/${id}`, { token: architect })).body.webhook;
    }
    expect(webhook).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('410') });
    expect(webhook.disabled_at).toMatch(TIMESTAMP);

    // Disabled: the next event is not even queued for it, and nothing more is sent.
    await insertVersion(DOC.schoolMenuiserieDurand, 'DECLINED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.at('/gone')).toHaveLength(1);
    expect((await attemptsOf(id)).map((a) => a.outcome)).toEqual(['gone']);
  });

  it('signs with both secrets during a rotation: a receiver holding either verifies', async () => {
    const { id, secret: before } = await createWebhook('/rotating', ['contractor.answered']);
    const rotated = await request(t.url, 'POST', `/api/svc/v1/webhooks/${id}/rotate-secret`, { token: architect });
    expect(rotated.status).toBe(200);
    const after = rotated.body.secret as string;
    expect(after).toMatch(/^whsec_/);
    expect(after).not.toBe(before);
    expect(rotated.body.webhook.previous_secret_expires_at).toMatch(TIMESTAMP);

    await insertVersion(DOC.residenceElecMartin, 'ANSWERED', 2000);
    await receiver.until(() => receiver.at('/rotating').length === 1);
    const [delivery] = receiver.at('/rotating');
    expect(delivery.signature.split(' ')).toHaveLength(2);
    expect(verified(after, delivery).type).toBe('contractor.answered');
    expect(verified(before, delivery).type).toBe('contractor.answered');
  });

  it('never sends an organization\'s events to another organization\'s endpoint', async () => {
    const mine = await createWebhook('/sud', ['contractor.answered', 'contractor.declined'], ORG.cabinetSud, other);
    await insertVersion(DOC.residenceElecServices, 'ANSWERED', 3000);
    await insertVersion(DOC.sudCharpenteVercors, 'ANSWERED', 4000);
    await receiver.until(() => receiver.at('/sud').length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const got = receiver.at('/sud').map((d) => verified(mine.secret, d).data);
    expect(got).toEqual([expect.objectContaining({ document_id: DOC.sudCharpenteVercors, amount: 4000 })]);
  });

  it('reports invitations, archiving and template changes made through the API', async () => {
    const { secret } = await createWebhook('/lifecycle', ['contractor.invited', 'project.archived', 'template.created', 'template.deleted']);
    const project = DEMO_IDS.projects.school;
    const invited = await request(t.url, 'POST', `/api/svc/v1/projects/${project}/templates/${DEMO_IDS.templates.schoolMenuiseries}/contractors`, {
      token: architect, body: { contractors: [{ name: 'Menuiserie Nouvelle', email: 'webhooks-invite@example.test' }] },
    });
    expect(invited.status).toBe(201);
    const archived = await request(t.url, 'PUT', `/api/svc/v1/projects/${project}/archive`, { token: architect });
    expect(archived.status).toBe(200);
    await receiver.until(() => receiver.at('/lifecycle').length >= 2);
    const types = receiver.at('/lifecycle').map((d) => verified(secret, d));
    expect(types.map((e) => e.type).sort()).toEqual(['contractor.invited', 'project.archived']);
    expect(types.find((e) => e.type === 'project.archived')!.data).toMatchObject({ project_id: project, archived_at: expect.stringMatching(TIMESTAMP) });
    expect(types.find((e) => e.type === 'contractor.invited')!.data).toMatchObject({ project_id: project, template_id: DEMO_IDS.templates.schoolMenuiseries });
  });

  it('sends a test event on request, and redelivers an attempt\'s event with the same webhook-id', async () => {
    const { id, secret } = await createWebhook('/test-events', ['template.closed']);
    const sent = await request(t.url, 'POST', `/api/svc/v1/webhooks/${id}/test`, { token: architect });
    expect(sent.status).toBe(202);
    expect(sent.body.event).toMatchObject({ type: 'webhook.test', created_at: expect.stringMatching(TIMESTAMP) });
    await receiver.until(() => receiver.at('/test-events').length === 1);
    expect(verified(secret, receiver.at('/test-events')[0])).toMatchObject({ type: 'webhook.test', data: { webhook_id: id, organization_id: ORG.atelierDemo } });

    let attempts = await attemptsOf(id);
    for (let i = 0; i < 20 && !attempts.length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      attempts = await attemptsOf(id);
    }
    const again = await request(t.url, 'POST', `/api/svc/v1/webhooks/${id}/attempts/${attempts[0].id}/redeliver`, { token: architect });
    expect(again.status).toBe(202);
    await receiver.until(() => receiver.at('/test-events').length === 2);
    const [first, second] = receiver.at('/test-events');
    expect(second.id).toBe(first.id);
    expect(second.id).toBe(sent.body.event.id);
  });
});
