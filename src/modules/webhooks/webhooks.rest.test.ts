import { Client } from 'pg';
import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { queryRows } from '../../../test/support/databases';
import { gql } from '../../../test/support/graphql';
import { request } from '../../../test/support/http';
import { WebhookReceiver } from '../../../test/support/webhook-receiver';

/** The webhook operations (an extension beside the interface, docs/webhooks.md): one describe per operation. */

const ORG = DEMO_IDS.organizations;
const UNKNOWN = '0b7e3c1a-5f7d-4c2e-9a61-3d2f1e0c9b8a';
const BASE = '/api/svc/v1/webhooks';

let t: TestApp;
let receiver: WebhookReceiver;
let architect: string;
let other: string;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  t = await startTestApp({ WEBHOOK_MAX_ENDPOINTS_PER_ORGANIZATION: '12' });
  [architect, other] = await Promise.all(['architect@demo.test', 'other@demo.test'].map((u) => tokenFor(t.url, u)));
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const create = (body: Record<string, unknown>, token = architect) => request(t.url, 'POST', BASE, { token, body });
const valid = (extra: Record<string, unknown> = {}) => ({ organization_id: ORG.atelierNord, url: `${receiver.url}/ops`, event_types: ['contractor.answered'], ...extra });

/** An IP address in a text: IPv4 dotted, or IPv6 (`::`, or hex groups joined by colons). */
const ADDRESS = /\b\d{1,3}(\.\d{1,3}){3}\b|::|\b[0-9a-f]{1,4}(:[0-9a-f]{1,4}){2,}\b/i;

/**
 * The text pg_stat_activity shows of the statement of `action` that writes webhook_endpoint, caught while it waits:
 * another connection holds the table in SHARE mode, which lets the reads and row locks before it run (SELECT ... FOR
 * UPDATE takes ROW SHARE) and stops the first INSERT or UPDATE (ROW EXCLUSIVE). Released as soon as it was seen, well
 * within the pool's lock_timeout. `like` picks the statement.
 */
async function writeSeenWaiting<T>(like: string, action: () => Promise<T>): Promise<{ statement: string | undefined; result: T }> {
  const holder = new Client({ connectionString: t.databaseUrl });
  const watcher = new Client({ connectionString: t.databaseUrl });
  await Promise.all([holder.connect(), watcher.connect()]);
  try {
    await holder.query('begin');
    await holder.query('lock table webhook_endpoint in share mode');
    const pending = action();
    let statement: string | undefined;
    for (let i = 0; i < 100 && statement === undefined; i++) {
      // Outside any transaction: each read is a new snapshot of the sessions.
      statement = (await watcher.query<{ query: string }>(`select query from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like $1`, [like])).rows[0]?.query;
      if (statement === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await holder.query('commit');
    return { statement, result: await pending };
  } finally {
    await Promise.all([holder.end(), watcher.end()]);
  }
}

describe('POST /api/svc/v1/webhooks (createWebhook)', () => {
  it('creates an endpoint and shows its Standard Webhooks secret once', async () => {
    const res = await create(valid({ description: 'ERP' }));
    expect(res.status).toBe(201);
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(res.body.webhook).toMatchObject({
      organization_id: ORG.atelierNord, url: `${receiver.url}/ops`, description: 'ERP', event_types: ['contractor.answered'],
      enabled: true, disabled_at: null, disabled_reason: null, failing_since: null, previous_secret_expires_at: null,
    });
    const read = await request(t.url, 'GET', `${BASE}/${res.body.webhook.id}`, { token: architect });
    expect(read.body.webhook).toEqual(res.body.webhook);
    expect(JSON.stringify(read.body)).not.toContain(res.body.secret);
  });

  it.each([
    ['an unknown event type', { event_types: ['contractor.hired'] }, 'event_types'],
    ['no event type', { event_types: [] }, 'event_types'],
    ['a URL that is not one', { url: 'not a url' }, 'url'],
    ['another scheme', { url: 'ftp://example.com/hook' }, 'url'],
    ['credentials in the URL', { url: 'https://user:secret@example.com/hook' }, 'url'],
    ['a private address', { url: 'http://10.1.2.3/hook' }, 'url'],
    ['the metadata service', { url: 'http://169.254.169.254/latest' }, 'url'],
    ['a missing organization', { organization_id: undefined }, 'organization_id'],
  ])('refuses %s with 400 naming the field', async (_, change, field) => {
    const res = await create(valid(change));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(400);
    // The field refused is named where a client reads it: in `errors[].field`, not merely somewhere in the body.
    expect((res.body.errors as Array<{ field: string }>).map((e) => e.field)).toContain(field);
  });

  it('answers 404 for an organization where the caller is not Administrator, as for an unknown one', async () => {
    expect((await create(valid({ organization_id: ORG.cabinetSud }))).status).toBe(404);
    expect((await create(valid({ organization_id: UNKNOWN }))).status).toBe(404);
  });

  it('refuses more endpoints than the organization may hold (WEBHOOK_MAX_ENDPOINTS_PER_ORGANIZATION) with 409', async () => {
    const [{ count }] = await queryRows<{ count: number }>(t.databaseUrl, 'select count(*)::int as count from webhook_endpoint where organization_id = $1', [ORG.atelierDemo]);
    for (let i = count; i < 12; i++) expect((await create(valid({ organization_id: ORG.atelierDemo }))).status).toBe(201);
    const res = await create(valid({ organization_id: ORG.atelierDemo }));
    expect(res.status).toBe(409);
    expect(res.body.message).toContain('at most 12');
  });

  it('refuses a name resolving to a refused address, a name that does not resolve and a refused IP with one 400 that names no address', async () => {
    const logged: Array<{ msg: string; target?: { host: string; addresses?: string[]; dnsError?: string } }> = [];
    const closed = await startTestApp({ WEBHOOK_ALLOWED_NETWORKS: 'none', LOG_LEVEL: 'warn' }, undefined, { logTo: { write: (line) => void logged.push(JSON.parse(line)) } });
    try {
      const token = await tokenFor(closed.url, 'architect@demo.test');
      const [resolves, unknown, literal] = await Promise.all(['http://localhost/hook', 'http://webhook-target.invalid/hook', 'http://127.0.0.1/hook']
        .map((url) => request(closed.url, 'POST', BASE, { token, body: valid({ url }) })));
      const told = (res: typeof resolves) => ({ status: res.status, code: res.body.code, message: res.body.message, errors: res.body.errors });
      expect(told(resolves)).toEqual({ status: 400, code: 400, message: expect.any(String), errors: [{ field: 'url', message: expect.any(String) }] });
      expect(told(unknown)).toEqual(told(resolves));
      expect(told(literal)).toEqual(told(resolves));
      expect(resolves.text).not.toMatch(ADDRESS);
      expect(unknown.text).not.toMatch(/ENOTFOUND|EAI_AGAIN|resolve/i);
      // The reason is the operator's, in the request's log.
      const targets = logged.filter((l) => l.target).map((l) => l.target!);
      expect(targets).toEqual(expect.arrayContaining([
        { host: 'localhost', addresses: expect.arrayContaining(['127.0.0.1']) },
        { host: 'webhook-target.invalid', dnsError: expect.any(String) },
        { host: '127.0.0.1', addresses: ['127.0.0.1'] },
      ]));
    } finally {
      await closed.close();
    }
  });

  it('refuses IPv4-compatible IPv6 addresses (::/96) with 400, and still the 6to4, Teredo, NAT64 and IPv4-mapped ones', async () => {
    const compatible = ['http://[::7f00:1]/', 'http://[::a9fe:a9fe]/latest', 'http://[::10.0.0.1]/', 'http://[::8.8.8.8]/'];
    const before = ['http://[2002:a9fe:a9fe::]/', 'http://[2001::a9fe:a9fe]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://[::ffff:169.254.169.254]/'];
    for (const url of [...compatible, ...before]) {
      const res = await create(valid({ url }));
      expect([url, res.status, res.body.errors?.[0]?.field]).toEqual([url, 400, 'url']);
    }
  });

  it('refuses an endpoint on this machine when WEBHOOK_ALLOWED_NETWORKS is unset, outside production too', async () => {
    for (const NODE_ENV of ['test', 'development']) {
      const unset = await startTestApp({ NODE_ENV, WEBHOOK_ALLOWED_NETWORKS: '' });
      try {
        const token = await tokenFor(unset.url, 'architect@demo.test');
        for (const url of [`${receiver.url}/local`, `${receiver.url.replace('127.0.0.1', 'localhost')}/local`, 'http://[::1]:9/local']) {
          const res = await request(unset.url, 'POST', BASE, { token, body: valid({ url }) });
          expect([NODE_ENV, url, res.status]).toEqual([NODE_ENV, url, 400]);
        }
        expect(unset.config.webhooks.allowedNetworks).toEqual([]);
      } finally {
        await unset.close();
      }
    }
  });

  it('sends the secret as a bound parameter: the insert that stores it shows $n placeholders in pg_stat_activity, never the secret', async () => {
    const { statement, result: res } = await writeSeenWaiting('insert into webhook_endpoint%', () => create(valid()));
    expect(res.status).toBe(201);
    expect(statement).toBeDefined();
    expect(statement).toMatch(/\$\d/);
    expect(statement).not.toContain(res.body.secret);
    expect(statement).not.toContain('whsec_');
  });
});

describe('GET /api/svc/v1/webhooks (listWebhooks)', () => {
  it('lists the endpoints of the caller\'s organizations only', async () => {
    const theirs = await create({ ...valid(), organization_id: ORG.cabinetSud }, other);
    expect(theirs.status).toBe(201);
    const mine = await request(t.url, 'GET', BASE, { token: architect });
    expect(mine.status).toBe(200);
    expect(mine.body.webhooks.length).toBeGreaterThan(0);
    expect(mine.body.webhooks.every((w: { organization_id: string }) => [ORG.atelierDemo, ORG.atelierNord].includes(w.organization_id))).toBe(true);
    const theirList = await request(t.url, 'GET', BASE, { token: other });
    expect(theirList.body.webhooks.map((w: { id: string }) => w.id)).toEqual([theirs.body.webhook.id]);
  });
});

describe('GET /api/svc/v1/webhooks/{webhookId} (getWebhook)', () => {
  it('answers 404 for another organization\'s endpoint, an unknown one, and 400 for an id that is not a UUID', async () => {
    const theirs = await create({ ...valid(), organization_id: ORG.cabinetSud }, other);
    expect((await request(t.url, 'GET', `${BASE}/${theirs.body.webhook.id}`, { token: architect })).status).toBe(404);
    expect((await request(t.url, 'GET', `${BASE}/${UNKNOWN}`, { token: architect })).status).toBe(404);
    expect((await request(t.url, 'GET', `${BASE}/nope`, { token: architect })).status).toBe(400);
  });
});

describe('PUT /api/svc/v1/webhooks/{webhookId} (updateWebhook)', () => {
  it('changes what is sent, leaves the rest, and disables and enables the endpoint', async () => {
    const { id } = (await create(valid())).body.webhook;
    const changed = await request(t.url, 'PUT', `${BASE}/${id}`, { token: architect, body: { event_types: ['template.closed', 'project.archived'], enabled: false } });
    expect(changed.status).toBe(200);
    expect(changed.body.webhook).toMatchObject({
      url: `${receiver.url}/ops`, event_types: ['template.closed', 'project.archived'], enabled: false, disabled_reason: 'Disabled by its organization',
    });
    const enabled = await request(t.url, 'PUT', `${BASE}/${id}`, { token: architect, body: { enabled: true } });
    expect(enabled.body.webhook).toMatchObject({ enabled: true, disabled_at: null, disabled_reason: null });
  });

  it('checks a new URL as creation does, and changes nothing when refused', async () => {
    const { id } = (await create(valid())).body.webhook;
    const res = await request(t.url, 'PUT', `${BASE}/${id}`, { token: architect, body: { url: 'http://192.168.1.10/hook' } });
    expect(res.status).toBe(400);
    expect((await request(t.url, 'GET', `${BASE}/${id}`, { token: architect })).body.webhook.url).toBe(`${receiver.url}/ops`);
  });

  it('answers 404 for another organization\'s endpoint', async () => {
    const theirs = await create({ ...valid(), organization_id: ORG.cabinetSud }, other);
    expect((await request(t.url, 'PUT', `${BASE}/${theirs.body.webhook.id}`, { token: architect, body: { enabled: false } })).status).toBe(404);
  });
});

describe('DELETE /api/svc/v1/webhooks/{webhookId} (deleteWebhook)', () => {
  it('deletes the endpoint and its pending deliveries', async () => {
    const { id } = (await create(valid())).body.webhook;
    expect((await request(t.url, 'DELETE', `${BASE}/${id}`, { token: architect })).status).toBe(204);
    expect((await request(t.url, 'GET', `${BASE}/${id}`, { token: architect })).status).toBe(404);
    expect(await queryRows(t.databaseUrl, 'select 1 from webhook_delivery where endpoint_id = $1', [id])).toEqual([]);
  });
});

describe('POST /api/svc/v1/webhooks/{webhookId}/rotate-secret (rotateWebhookSecret)', () => {
  it('answers a new secret and until when the previous one also signs', async () => {
    const created = (await create(valid())).body;
    const res = await request(t.url, 'POST', `${BASE}/${created.webhook.id}/rotate-secret`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.secret).not.toBe(created.secret);
    const overlap = Date.parse(res.body.webhook.previous_secret_expires_at) - Date.now();
    expect(overlap).toBeGreaterThan(23 * 3600e3);
    expect(overlap).toBeLessThanOrEqual(24 * 3600e3);
  });

  it('sends the new secret as a bound parameter: the rotation\'s update shows $n placeholders in pg_stat_activity, never the secret', async () => {
    const created = (await create(valid())).body;
    const { statement, result: res } = await writeSeenWaiting('%previous_secret = secret%', () =>
      request(t.url, 'POST', `${BASE}/${created.webhook.id}/rotate-secret`, { token: architect }));
    expect(res.status).toBe(200);
    expect(statement).toBeDefined();
    expect(statement).toMatch(/\$\d/);
    expect(statement).not.toContain(res.body.secret);
    expect(statement).not.toContain('whsec_');
  });
});

describe('POST /api/svc/v1/webhooks/{webhookId}/test (sendTestWebhook)', () => {
  it('answers 409 for a disabled endpoint', async () => {
    const { id } = (await create(valid())).body.webhook;
    await request(t.url, 'PUT', `${BASE}/${id}`, { token: architect, body: { enabled: false } });
    const res = await request(t.url, 'POST', `${BASE}/${id}/test`, { token: architect });
    expect(res.status).toBe(409);
  });
});

describe('GET /api/svc/v1/webhooks/{webhookId}/attempts (listWebhookAttempts)', () => {
  it('refuses a limit out of bounds with 400', async () => {
    const { id } = (await create(valid())).body.webhook;
    expect((await request(t.url, 'GET', `${BASE}/${id}/attempts?limit=0`, { token: architect })).status).toBe(400);
    expect((await request(t.url, 'GET', `${BASE}/${id}/attempts?limit=101`, { token: architect })).status).toBe(400);
    expect((await request(t.url, 'GET', `${BASE}/${id}/attempts?limit=100`, { token: architect })).body).toEqual({ attempts: [] });
  });
});

describe('POST /api/svc/v1/webhooks/{webhookId}/attempts/{attemptId}/redeliver (redeliverWebhookAttempt)', () => {
  it('answers 404 for an attempt of another endpoint', async () => {
    const { id } = (await create(valid())).body.webhook;
    expect((await request(t.url, 'POST', `${BASE}/${id}/attempts/${UNKNOWN}/redeliver`, { token: architect })).status).toBe(404);
  });
});

describe('GraphQL webhooks', () => {
  it('creates, lists and reads endpoints with the same rules as REST', async () => {
    const created = (await gql(t.url, architect, `mutation($input: CreateWebhookInput!) {
      createWebhook(input: $input) { secret webhook { id organizationId eventTypes enabled } } }`,
    { input: { organizationId: ORG.atelierNord, url: `${receiver.url}/graphql`, eventTypes: ['template.created'] } })).body;
    expect(created.errors).toBeUndefined();
    const { webhook, secret } = created.data.createWebhook;
    expect(secret).toMatch(/^whsec_/);
    expect(webhook).toMatchObject({ organizationId: ORG.atelierNord, eventTypes: ['template.created'], enabled: true });
    const listed = (await gql(t.url, architect, `{ webhooks { id } webhookAttempts(webhookId: "${webhook.id}") { id } }`)).body;
    expect(listed.data.webhooks.map((w: { id: string }) => w.id)).toContain(webhook.id);
    expect(listed.data.webhookAttempts).toEqual([]);

    const refused = (await gql(t.url, architect, `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { secret } }`,
      { input: { organizationId: ORG.atelierNord, url: 'http://10.0.0.1/', eventTypes: ['nope'] } })).body;
    expect(refused.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const hidden = (await gql(t.url, other, `{ webhook(id: "${webhook.id}") { id } }`)).body;
    expect(hidden.errors[0].extensions.code).toBe('NOT_FOUND');
  });
});

describe('production mode', () => {
  it('accepts only https:// URLs resolving to public addresses, and refuses a private one at delivery too', async () => {
    const prod = await startTestApp({ WEBHOOK_HTTPS_ONLY: 'true', WEBHOOK_ALLOWED_NETWORKS: 'none', WEBHOOK_POLL_INTERVAL: '25ms' });
    try {
      const token = await tokenFor(prod.url, 'architect@demo.test');
      const post = (url: string) => request(prod.url, 'POST', BASE, { token, body: { organization_id: ORG.atelierDemo, url, event_types: ['contractor.declined'] } });
      for (const url of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://localhost/hook', 'https://10.0.0.8/hook', 'https://[::1]/hook', 'https://[::ffff:192.168.0.1]/hook']) {
        const res = await post(url);
        expect([url, res.status]).toEqual([url, 400]);
      }
      // An endpoint written before (or by another tool) whose host resolves to loopback: refused at delivery, nothing sent.
      const [row] = await queryRows<{ id: string }>(prod.databaseUrl, `insert into webhook_endpoint (id, organization_id, url, event_types, secret)
        values (gen_random_uuid(), $1, $2, '{contractor.declined}', 'whsec_MfKQ9r8GKYqrTZjUPD8ILPZ8cL8H8Yb8') returning id`,
      [ORG.atelierDemo, `${receiver.url.replace('127.0.0.1', 'localhost')}/private`]);
      await queryRows(prod.databaseUrl, `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, sent_at)
        values (gen_random_uuid(), now(), now(), $1, 50, 'DECLINED', 0, now())`, [DEMO_IDS.documents.schoolDemolitionPetit]);
      let attempts: Array<{ outcome: string; error: string }> = [];
      for (let i = 0; i < 100 && !attempts.length; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        attempts = await queryRows<{ outcome: string; error: string }>(prod.databaseUrl, 'select outcome, error from webhook_attempt where endpoint_id = $1', [row.id]);
      }
      expect(attempts.map((a) => a.outcome)).toEqual(['refused']);
      // What the attempts list shows its organization: the refusal, not the address the name resolved to.
      expect(attempts[0].error).not.toMatch(ADDRESS);
      expect(receiver.at('/private')).toEqual([]);
    } finally {
      await prod.close();
    }
  });
});
