import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { queryRows } from '../../../test/support/databases';
import { gql } from '../../../test/support/graphql';
import { request } from '../../../test/support/http';
import { resignWithProviderKey } from '../../../test/support/idp-tokens';
import WebSocket from 'ws';
import { eventually, subscribe, wsClient, type TestWsClient } from '../../../test/support/subscriptions';

// GraphQL subscriptions over WebSocket (issue 12, docs/subscriptions.md), through a real graphql-ws client.

const PRJ = DEMO_IDS.projects.residence;
const TPL = DEMO_IDS.templates.residenceCharpente;
const STATISTICS = 'id answered mayAnswer declined contractors budgets { simulatedCost totalAnticipatedOffers }';
const PROJECT_CHANGED = `subscription($ids: [ID!]) { projectChanged(projectIds: $ids) {
  projectId changes templateIds documentIds project { id name statistics { ${STATISTICS} } } } }`;
const TEMPLATE_CHANGED = `subscription($id: ID!) { templateChanged(templateId: $id) {
  templateId projectId changes documentIds template { id stats { contractors contractorsAnswers } documents { id state } } } }`;
const INVITE = `mutation($p: ID!, $t: ID!, $c: [ContractorInvitationInput!]!) {
  inviteContractors(projectId: $p, templateId: $t, contractors: $c) { documents { id } } }`;

let t: TestApp;
let architect: string;
let other: string;
const clients: TestWsClient[] = [];
/** The server's log lines at WARN and above, parsed. */
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  t = await startTestApp({ SUBSCRIPTIONS_MAX_PER_CONNECTION: '3', SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CALLER: '4', AUTH_CLOCK_TOLERANCE_SECONDS: '0', LOG_LEVEL: 'warn' },
    undefined, { logTo: { write: (line) => logLines.push(JSON.parse(line)) } });
  [architect, other] = await Promise.all([tokenFor(t.url, 'architect@demo.test'), tokenFor(t.url, 'other@demo.test')]);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
  // Every connection of a test is gone before the next one counts its own.
  await eventually(async () => t.app.metrics.subscriptionConnections.get().then((m) => m.values[0]?.value === 0), 'connections closed');
});
afterAll(() => t?.close());

function connect(token: string | null, params?: Record<string, unknown>): TestWsClient {
  const c = wsClient(t.url, token, params);
  clients.push(c);
  return c;
}

/** Subscriptions this instance runs now (graphql_subscriptions_active): a subscription is registered once counted. */
async function active(): Promise<number> {
  const { values } = await t.app.metrics.subscriptionsActive.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}
const registered = (n: number) => eventually(async () => (await active()) === n, `${n} subscriptions registered`);

const statisticsNow = async (token: string) =>
  (await gql(t.url, token, `query($id: ID!) { project(id: $id) { statistics { ${STATISTICS} } } }`, { id: PRJ })).body.data.project.statistics;

/** A document of the project without any version yet: the contractor has not answered. */
async function unansweredDocument(): Promise<string> {
  const [row] = await queryRows<{ id: string }>(t.databaseUrl, `select d.id from document d join template t on t.id = d.template_id
    where t.project_id = $1 and not exists (select 1 from document_version v where v.document_id = d.id) order by d.id limit 1`, [PRJ]);
  return row.id;
}

/** What the contractor portal does: a version row, written by another client of the database. */
const answerWithSql = (documentId: string, subTotal: number) => queryRows(t.databaseUrl, `insert into document_version
  (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
  select gen_random_uuid(), now(), now(), $1, coalesce(max(version), 0) + 1, 'ANSWERED', $2, 0, false, true, now()
  from document_version where document_id = $1`, [documentId, subTotal]);

describe('Subscription.projectChanged', () => {
  it('delivers a version inserted with plain SQL by another client of the database, with the new statistics', async () => {
    const c = connect(architect);
    const sub = subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    await registered(1);
    const before = await statisticsNow(architect);
    const documentId = await unansweredDocument();

    await answerWithSql(documentId, 1234.5);
    const update = await sub.next();

    const after = await statisticsNow(architect);
    expect(after.answered).toBe(before.answered + 1);
    expect(update.errors).toBeUndefined();
    expect(update.data!.projectChanged).toEqual({
      projectId: PRJ,
      changes: ['VERSION'],
      templateIds: [expect.any(String)],
      documentIds: [documentId],
      project: { id: PRJ, name: expect.any(String), statistics: after },
    });
  });

  it('delivers a change made through the service (a GraphQL mutation), to every project subscriber', async () => {
    const c = connect(architect);
    const all = subscribe(c.client, 'subscription { projectChanged { projectId changes project { statistics { contractors } } } }');
    const one = subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    await registered(2);
    const before = await statisticsNow(architect);

    const invited = await gql(t.url, architect, INVITE, { p: PRJ, t: TPL, c: [{ name: 'Toitures Live', email: 'devis@toitures-live.fr' }] });
    expect(invited.body.errors).toBeUndefined();

    const [fromAll, fromOne] = await Promise.all([all.next(), one.next()]);
    expect(fromAll.data!.projectChanged).toEqual({ projectId: PRJ, changes: expect.arrayContaining(['DOCUMENT']), project: { statistics: { contractors: before.contractors + 1 } } });
    expect(fromOne.data!.projectChanged).toMatchObject({ templateIds: [TPL], documentIds: [invited.body.data.inviteContractors.documents[0].id] });
  });

  it('refuses a project of another organization with NOT_FOUND, and never sends its changes to that caller', async () => {
    const outsider = connect(other);
    const refused = subscribe(outsider.client, PROJECT_CHANGED, { ids: [PRJ] });
    const everything = subscribe(outsider.client, PROJECT_CHANGED, {});
    const template = subscribe(outsider.client, TEMPLATE_CHANGED, { id: TPL });
    expect(await refused.ended).toBeNull();
    expect(await template.ended).toBeNull();
    expect(refused.results.map((r) => [r.data, r.errors?.map((e) => e.extensions?.code)])).toEqual([[undefined, ['NOT_FOUND']]]);
    expect(template.results.map((r) => r.errors?.map((e) => e.extensions?.code))).toEqual([['NOT_FOUND']]);
    // The architect's subscription is the control: once it has the update, the outsider would have had theirs.
    const control = subscribe(connect(architect).client, PROJECT_CHANGED, { ids: [PRJ] });
    await registered(2);

    await answerWithSql(await unansweredDocument(), 99);
    await control.next();

    expect(everything.results).toEqual([]);
  });

  it('resolves a payload once per group of callers: fields that are a caller\'s own on a User are null, theirs too', async () => {
    const c = connect(architect);
    const sub = subscribe<{ projectChanged: { project: { managers: Array<{ id: string; currentOrganizationId: string | null }> } } }>(c.client,
      'subscription($ids: [ID!]) { projectChanged(projectIds: $ids) { project { managers { id currentOrganizationId } } } }', { ids: [PRJ] });
    await registered(1);
    await answerWithSql(await unansweredDocument(), 55);
    const update = await sub.next();
    expect(update.data!.projectChanged.project.managers).toEqual([{ id: DEMO_IDS.users.architect, currentOrganizationId: null }]);
  });

  it('checks the caller again at every delivery: no update once no longer Administrator, the connection closed once without API access', async () => {
    const c = connect(architect);
    const sub = subscribe<{ projectChanged: { projectId: string } }>(c.client, 'subscription { projectChanged { projectId } }');
    await registered(1);
    const role = (value: string) => queryRows(t.databaseUrl, 'update membership set role = $1 where user_id = $2 and organization_id = $3',
      [value, DEMO_IDS.users.architect, DEMO_IDS.organizations.atelierDemo]);
    const apiEnabled = (value: boolean) => queryRows(t.databaseUrl, 'update app_user set api_enabled = $1 where id = $2', [value, DEMO_IDS.users.architect]);
    try {
      await role('MEMBER');
      await answerWithSql(await unansweredDocument(), 66);
      // The control: a change in Atelier Nord, where they are still Administrator, comes after it.
      await queryRows(t.databaseUrl, 'update project set name = name where id = $1', [DEMO_IDS.projects.nordOffices]);
      expect((await sub.next()).data!.projectChanged.projectId).toBe(DEMO_IDS.projects.nordOffices);
      expect(sub.results).toHaveLength(1);

      await apiEnabled(false);
      await queryRows(t.databaseUrl, 'update project set name = name where id = $1', [DEMO_IDS.projects.nordOffices]);
      expect(await c.closed).toEqual({ code: 4403, reason: 'The API is not activated for this user' });
      expect(sub.results).toHaveLength(1);
    } finally {
      await role('ADMINISTRATOR');
      await apiEnabled(true);
    }
  });

  it('answers BAD_USER_INPUT for a malformed id or an empty list', async () => {
    const c = connect(architect);
    const malformed = subscribe(c.client, PROJECT_CHANGED, { ids: ['nope'] });
    const empty = subscribe(c.client, PROJECT_CHANGED, { ids: [] });
    await Promise.all([malformed.ended, empty.ended]);
    expect(malformed.results[0].errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'projectIds.0', message: 'must be a UUID' }] } })]);
    expect(empty.results[0].errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('Subscription.templateChanged', () => {
  it('delivers the template with its fresh stats and documents when a contractor answers', async () => {
    const c = connect(architect);
    const sub = subscribe(c.client, TEMPLATE_CHANGED, { id: TPL });
    await registered(1);
    const [document] = await queryRows<{ id: string }>(t.databaseUrl, 'select id from document where template_id = $1 order by id limit 1', [TPL]);

    await answerWithSql(document.id, 777);
    const update = await sub.next();

    const { body } = await gql(t.url, architect, `query($p: ID!) { project(id: $p) { templates { id stats { contractors contractorsAnswers } documents { id state } } } }`, { p: PRJ });
    const fresh = body.data.project.templates.find((x: { id: string }) => x.id === TPL);
    expect(update.data!.templateChanged).toEqual({ templateId: TPL, projectId: PRJ, changes: ['VERSION'], documentIds: [document.id], template: fresh });
    expect(fresh.documents.find((d: { id: string }) => d.id === document.id).state).toBe('ANSWERED');
  });
});

describe('Subscription.templateChanged of a template that is deleted', () => {
  it('delivers the deletion (template null), then completes', async () => {
    const added = await gql(t.url, architect, 'mutation($p: ID!, $i: AddTemplateInput!) { addTemplate(projectId: $p, input: $i) { template { id } } }',
      { p: PRJ, i: { tradeId: DEMO_IDS.projectTrades.residence['07'] } });
    const templateId = added.body.data.addTemplate.template.id as string;
    const sub = subscribe(connect(architect).client, TEMPLATE_CHANGED, { id: templateId });
    await registered(1);

    const deleted = await gql(t.url, architect, 'mutation($p: ID!, $id: ID!) { deleteTemplate(projectId: $p, templateId: $id) { deletedTemplateIds } }', { p: PRJ, id: templateId });
    expect(deleted.body.data.deleteTemplate.deletedTemplateIds).toEqual([templateId]);

    expect((await sub.next()).data).toEqual({ templateChanged: { templateId, projectId: PRJ, changes: ['TEMPLATE'], documentIds: [], template: null } });
    expect(await sub.ended).toBeNull();
    expect(await active()).toBe(0);
  });
});

describe('WebSocket connections on /graphql', () => {
  it('close with 4401 without a token or with a refused one, with 4403 for a caller who may not use the API', async () => {
    const none = connect(null);
    const forged = connect('not.a.token');
    const member = connect(await tokenFor(t.url, 'member@demo.test'));
    expect(await none.closed).toEqual({ code: 4401, reason: 'Missing Authorization header' });
    expect((await forged.closed).code).toBe(4401);
    expect((await member.closed).code).toBe(4403);
  });

  it('close with 4403 when the token expires, not before', async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const expiring = await resignWithProviderKey(t.orm, architect, (claims) => ({ ...claims, exp }));
    const c = connect(expiring);
    await c.connected;
    const sub = subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    const closed = await c.closed;
    expect(closed).toEqual({ code: 4403, reason: 'The token has expired: connect again with a fresh token' });
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000);
    expect(await sub.ended).toEqual(expect.objectContaining({ code: 4403 }));
    const late = connect(expiring);
    expect((await late.closed).code).toBe(4401);
  });

  it('serve only subscriptions: a query or a mutation is refused with BAD_USER_INPUT', async () => {
    const c = connect(architect);
    const query = subscribe(c.client, '{ projects { totalCount } }');
    await query.ended;
    expect(query.results).toEqual([]);
    const error = await query.ended;
    expect(error).toEqual([expect.objectContaining({ message: 'Only subscriptions are served over WebSocket: send a query to /graphql over HTTP', extensions: { code: 'BAD_USER_INPUT' } })]);
  });

  it('refuse with BAD_USER_INPUT, keeping the connection, a subscription whose root field depends on a variable', async () => {
    const c = connect(architect);
    const conditional = subscribe(c.client, `subscription($flag: Boolean!, $ids: [ID!]) { projectChanged(projectIds: $ids) @include(if: $flag) { id } }`, { flag: true, ids: [PRJ] });
    const error = await conditional.ended;
    expect(error).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT' } })]);
    expect((error as Array<{ message: string }>)[0].message).toMatch(/^The root field of a subscription cannot depend on a variable/);
    // The same connection still serves a valid subscription.
    subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    await registered(1);
  });

  it('refuse an invalid document as over HTTP, with BAD_USER_INPUT (syntax, unknown field, unused variable) or the limit\'s code, never INTERNAL_SERVER_ERROR nor an ERROR log line', async () => {
    const errorsBefore = logLines.filter((l) => (l.level as number) >= 50).length;
    const c = connect(architect);
    const cases: Array<[string, string, RegExp]> = [
      ['subscription { projectChanged(projectIds: [] { id } }', 'BAD_USER_INPUT', /^Syntax Error/],
      ['subscription { projectChangedd { id } }', 'BAD_USER_INPUT', /Cannot query field "projectChangedd"/],
      ['subscription($unused: ID) { projectChanged { projectId } }', 'BAD_USER_INPUT', /Variable "\$unused" is never used/],
      [`subscription { projectChanged { project { ${'templates { slices { '.repeat(6)} id ${'} } '.repeat(6)} } } }`, 'DEPTH_LIMIT', /^Query depth limit of 12 exceeded, found 15\.$/],
      [`subscription { projectChanged { project { id ${'@include(if: true) '.repeat(21)} } } }`, 'DIRECTIVE_LIMIT', /^Directives limit of 20 exceeded/],
      [`subscription { projectChanged { ${'projectId '.repeat(102)} } }`, 'FIELD_REPEAT_LIMIT', /over the limit of 100/],
      [`subscription { projectChanged { projectId } } #${'x'.repeat(70_000)}`, 'DOCUMENT_SIZE_LIMIT', /over the limit of 65536 bytes/],
      [`subscription { projectChanged(projectIds: ${'['.repeat(3000)}"x"${']'.repeat(3000)}) { projectId } }`, 'DEPTH_LIMIT', /^The document is nested too deeply$/],
    ];
    for (const [query, code, message] of cases) {
      const error = await subscribe(c.client, query).ended as Array<{ message: string; extensions: { code: string } }>;
      expect([query.slice(0, 60), error[0].extensions.code]).toEqual([query.slice(0, 60), code]);
      expect(error[0].message).toMatch(message);
      for (const e of error) expect(e.extensions.code).not.toBe('INTERNAL_SERVER_ERROR');
    }
    // The connection still serves a valid subscription; nothing was logged as a server fault.
    subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    await registered(1);
    expect(logLines.filter((l) => (l.level as number) >= 50).length).toBe(errorsBefore);
  });

  it('limit the subscriptions of a connection (SUBSCRIPTIONS_MAX_PER_CONNECTION) and the connections of a caller (SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CALLER)', async () => {
    const c = connect(architect);
    for (let i = 0; i < 3; i++) subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    await registered(3);
    const fourth = subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    expect(await fourth.ended).toEqual([{ message: 'Too many subscriptions on this connection (at most 3): complete one first', extensions: { code: 'BAD_USER_INPUT' } }]);

    const more = [connect(architect), connect(architect), connect(architect)];
    await Promise.all(more.map((m) => m.connected));
    const fifth = connect(architect);
    expect(await fifth.closed).toEqual({ code: 4429, reason: 'Too many subscription connections for this caller (at most 4)' });
    // Another caller is not counted with them.
    await connect(other).connected;
  });

  it('are counted in /metrics', async () => {
    const c = connect(architect);
    subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    subscribe(c.client, TEMPLATE_CHANGED, { id: TPL });
    await registered(2);
    const metrics = (await request(t.url, 'GET', '/metrics')).text;
    expect(metrics).toMatch(/^graphql_subscription_connections 1$/m);
    expect(metrics).toMatch(/^graphql_subscriptions_active\{subscription="projectChanged"\} 1$/m);
    expect(metrics).toMatch(/^graphql_subscriptions_active\{subscription="templateChanged"\} 1$/m);
    expect(metrics).toMatch(/^change_listener_listening 1$/m);
    expect(metrics).toMatch(/^graphql_subscription_refusals_total\{reason="unauthenticated"\} [1-9]/m);
  });

  it('answer 404 to an upgrade on another path, and close 4406 without the graphql-transport-ws subprotocol', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/elsewhere`);
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
      socket.on('open', () => reject(new Error('opened')));
      socket.on('error', () => undefined);
    });
    expect(status).toBe(404);
    const code = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`);
      socket.on('close', (c) => resolve(c));
      socket.on('error', () => undefined);
    });
    expect(code).toBe(4406);
  });
});

describe('shutdown', () => {
  it('closes every WebSocket connection with 1001 Going Away, so that clients reconnect to another instance', async () => {
    const second = await startTestApp({}, undefined, { database: t.databaseUrl });
    const c = wsClient(second.url, await tokenFor(second.url, 'architect@demo.test'));
    clients.push(c);
    const sub = subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
    await eventually(async () => (await second.app.metrics.subscriptionsActive.get()).values.some((v) => v.value === 1), 'subscribed');

    await second.close();

    expect(await c.closed).toEqual({ code: 1001, reason: 'The server is shutting down' });
    expect(await sub.ended).toEqual(expect.objectContaining({ code: 1001 }));
  });
});
