import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { queryRows } from '../../../test/support/databases';
import { request } from '../../../test/support/http';
import { WebhookReceiver, registerWebhook, verified } from '../../../test/support/webhook-receiver';

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

const createWebhook = (path: string, eventTypes: string[], organizationId: string = ORG.atelierDemo, token = architect) =>
  registerWebhook(t.url, token, { organizationId, url: `${receiver.url}${path}`, eventTypes });

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

  it('lets an endpoint that fails recover: a success clears its failing streak', async () => {
    const { id } = await createWebhook('/recovering', ['contractor.answered']);
    receiver.answer = (path, nth) => (path === '/recovering' && nth === 1 ? 502 : 200);
    await insertVersion(DOC.residencePlomberieLefevre, 'ANSWERED', 100);
    await receiver.until(() => receiver.at('/recovering').length === 2);
    let webhook: Record<string, unknown> = { failing_since: 'unknown' };
    for (let i = 0; i < 40 && webhook.failing_since !== null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      webhook = (await request(t.url, 'GET', `/api/svc/v1/webhooks/${id}`, { token: architect })).body.webhook;
    }
    expect(webhook).toMatchObject({ enabled: true, failing_since: null });
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
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/^webhook_endpoints_disabled_total\{reason="gone"\} 1$/m);
    expect(metrics).toMatch(/^webhook_attempts_total\{outcome="gone"\} 1$/m);
  });

  it('disables an endpoint whose deliveries all failed for WEBHOOK_DISABLE_AFTER (5 days), and says since when', async () => {
    const { id } = await createWebhook('/failing', ['contractor.declined']);
    receiver.answer = (path) => (path === '/failing' ? 500 : 200);
    await queryRows(t.databaseUrl, `update webhook_endpoint set failing_since = now() - interval '5 days 1 minute' where id = $1`, [id]);
    await insertVersion(DOC.schoolMenuiserieDurandRenovation, 'DECLINED');
    let webhook: Record<string, unknown> = {};
    for (let i = 0; i < 50 && webhook.enabled !== false; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      webhook = (await request(t.url, 'GET', `/api/svc/v1/webhooks/${id}`, { token: architect })).body.webhook;
    }
    expect(webhook).toMatchObject({ enabled: false, disabled_reason: expect.stringMatching(/^Every delivery failed since \d{4}-/) });
    expect(receiver.at('/failing')).toHaveLength(1);
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

  it('reports each event type, whoever writes: the API (invitation, template added and deleted, archive) or SQL', async () => {
    const { secret } = await createWebhook('/lifecycle', ['contractor.invited', 'contractor.intention_changed', 'contractor.downloaded',
      'template.created', 'template.closed', 'template.deleted', 'project.archived']);
    const project = DEMO_IDS.projects.school;
    const invited = await request(t.url, 'POST', `/api/svc/v1/projects/${project}/templates/${DEMO_IDS.templates.schoolMenuiseries}/contractors`, {
      token: architect, body: { contractors: [{ name: 'Menuiserie Nouvelle', email: 'webhooks-invite@example.test' }] },
    });
    expect(invited.status).toBe(201);
    const added = await request(t.url, 'POST', `/api/svc/v1/projects/${project}/templates`, {
      token: architect, body: { trade_id: DEMO_IDS.projectTrades.school['05'], budget: 1500 },
    });
    expect(added.status).toBe(201);
    const templateId = added.body.template.id as string;
    expect((await request(t.url, 'DELETE', `/api/svc/v1/projects/${project}/templates/${templateId}`, { token: architect })).status).toBe(204);
    // The contractor portal's writes, as SQL.
    const newcomer = invited.body.documents[0].id as string;
    await queryRows(t.databaseUrl, `update document set intention = 'NO', dce_downloaded_at = now() where id = $1`, [newcomer]);
    await queryRows(t.databaseUrl, 'update template set closed_at = now() where id = $1', [DEMO_IDS.templates.schoolDemolition]);
    expect((await request(t.url, 'PUT', `/api/svc/v1/projects/${project}/archive`, { token: architect })).status).toBe(200);

    await receiver.until(() => receiver.at('/lifecycle').length >= 7).catch((err) => {
      throw new Error(`${err.message}: ${receiver.at('/lifecycle').map((d) => verified(secret, d).type).join(', ')}`);
    });
    const events = receiver.at('/lifecycle').map((d) => verified(secret, d));
    const byType = Object.fromEntries(events.map((e) => [e.type, e.data]));
    expect(Object.keys(byType).sort()).toEqual(['contractor.downloaded', 'contractor.intention_changed', 'contractor.invited',
      'project.archived', 'template.closed', 'template.created', 'template.deleted']);
    expect(byType['contractor.invited']).toMatchObject({ project_id: project, template_id: DEMO_IDS.templates.schoolMenuiseries });
    expect(byType['template.created']).toMatchObject({ project_id: project, template_id: templateId, budget: 1500 });
    expect(byType['template.deleted']).toMatchObject({ project_id: project, template_id: templateId });
    expect(byType['contractor.intention_changed']).toMatchObject({ document_id: newcomer, intention: 'NO', previous_intention: null });
    expect(byType['contractor.downloaded']).toMatchObject({ document_id: newcomer, downloaded_at: expect.stringMatching(TIMESTAMP) });
    expect(byType['template.closed']).toMatchObject({
      template_id: DEMO_IDS.templates.schoolDemolition, closed_at: expect.stringMatching(TIMESTAMP), stats: expect.objectContaining({ contractors: expect.any(Number) }),
    });
    expect(byType['project.archived']).toMatchObject({ project_id: project, archived_at: expect.stringMatching(TIMESTAMP) });
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

describe('limits and retention', () => {
  it('paces the attempts to one organization\'s endpoints (WEBHOOK_MAX_ATTEMPTS_PER_SECOND)', async () => {
    const paced = await startTestApp({ WEBHOOK_MAX_ATTEMPTS_PER_SECOND: '4', WEBHOOK_POLL_INTERVAL: '25ms' });
    try {
      await registerWebhook(paced.url, await tokenFor(paced.url, 'architect@demo.test'),
        { organizationId: ORG.atelierDemo, url: `${receiver.url}/paced`, eventTypes: ['contractor.answered'] });
      await queryRows(paced.databaseUrl, `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, sent_at)
        select gen_random_uuid(), now(), now(), $1, g, 'ANSWERED', g, now() from generate_series(100, 111) g`, [DOC.residenceGoMoreau]);
      await receiver.until(() => receiver.at('/paced').length === 12);
      const times = receiver.at('/paced').map((r) => r.at);
      // 4 per second: the 12 attempts span at least two full windows after the first.
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(1900);
    } finally {
      await paced.close();
    }
  });

  it('prunes attempts, finished deliveries and their events past WEBHOOK_RETENTION, and keeps what is pending', async () => {
    const { id } = await createWebhook('/pruned', ['contractor.answered']);
    const rows = async () => (await queryRows<{ status: string }>(t.databaseUrl, 'select status from webhook_delivery where endpoint_id = $1 order by status', [id])).map((r) => r.status);
    await queryRows(t.databaseUrl, `with e as (insert into webhook_event (organization_id, type, payload, created_at)
        select $1, 'contractor.answered', '{}'::jsonb, now() - interval '31 days' from generate_series(1, 2) returning id),
      d as (insert into webhook_delivery (event_id, endpoint_id, status, created_at, finished_at, next_attempt_at)
        select e.id, $2, s.status, now() - interval '31 days', case when s.status = 'succeeded' then now() - interval '31 days' end, now() + interval '1 day'
        from (select id, row_number() over () as n from e) e join (values (1, 'succeeded'), (2, 'pending')) s(n, status) on s.n = e.n returning id, event_id)
      insert into webhook_attempt (delivery_id, endpoint_id, event_id, attempt, attempted_at, duration_ms, outcome)
        select d.id, $2, d.event_id, 1, now() - interval '31 days', 5, 'failed' from d`, [ORG.atelierDemo, id]);
    expect(await rows()).toEqual(['pending', 'succeeded']);
    await t.app.webhooks!.prune();
    expect(await rows()).toEqual(['pending']);
    expect(await queryRows(t.databaseUrl, 'select 1 from webhook_attempt where endpoint_id = $1', [id])).toEqual([]);
  });
});
