import type { ApolloClient } from '@apollo/client';
import { getNamedType, isObjectType, type GraphQLObjectType } from 'graphql';
import WebSocket from 'ws';
import { addTemplate, cachedDashboard, createClient, dashboard, invite, liveDashboard, projectPage, renameTrade } from '../examples/graphql/client';
import {
  ArchiveProjectDocument, CreateProjectDocument, CreateProjectTradeDocument, DeleteProjectTradeDocument, DeleteTemplateDocument,
  ProjectPageDocument, SwitchOrganizationDocument, type DashboardQuery,
} from '../examples/graphql/generated/graphql';
import { DEMO_IDS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { request } from './support/http';
import { eventually } from './support/subscriptions';
import { demoRootArguments } from './support/crawl-arguments';
import { crawl, idsUnderSeveralTypenames, introspect } from './support/schema-crawl';

// The GraphQL contract as a front end meets it: Apollo Client with its normalized InMemoryCache, over the
// operations of examples/graphql (typed by codegen). After each mutation the cache must hold what the server
// holds, read without any request.

let t: TestApp;
let token: string;
/** Requests Apollo Client sent, all clients together. */
let requests = 0;
const countingFetch: typeof fetch = (input, init) => {
  requests++;
  return fetch(input, init);
};
const newClient = () => createClient({ url: `${t.url}/graphql`, token, fetch: countingFetch, webSocketImpl: WebSocket });

const { projects: PRJ, projectTrades: TRD, templates: TPL } = DEMO_IDS;

beforeAll(async () => {
  t = await startTestApp();
  token = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

type Project = DashboardQuery['projects']['nodes'][number];
const projectIn = (data: DashboardQuery | null, id: string): Project => data!.projects.nodes.find((p) => p.id === id)!;

/**
 * The dashboard through a client, then `mutate` through the same client; answers the dashboard before, the one the
 * cache then holds (read without a request: exactly one request, the mutation's, was sent after the dashboard),
 * and the one the server answers now, through a client of its own.
 */
async function afterMutation(mutate: (client: ApolloClient) => Promise<unknown>) {
  const client = newClient();
  const before = await dashboard(client);
  const sent = requests;
  await mutate(client);
  const cached = cachedDashboard(client);
  expect(requests).toBe(sent + 1);
  const server = await dashboard(newClient());
  expect(cached).not.toBeNull();
  return { client, before, cached: cached!, server };
}

describe('the dashboard query through Apollo Client', () => {
  it('fills the cache so that reading it back gives the answer, each record once under its `__typename:id`', async () => {
    const client = newClient();
    const answer = await dashboard(client);
    expect(answer.projects.nodes.length).toBeGreaterThan(1);
    expect(cachedDashboard(client)).toEqual(answer);
    const snapshot = client.cache.extract() as Record<string, Record<string, unknown>>;
    const keys = Object.keys(snapshot);
    for (const prefix of ['User:', 'Organization:', 'Project:', 'ProjectStatistics:', 'ProjectTrade:', 'Template:', 'TemplateStats:', 'Document:', 'DocumentVersion:', 'Contractor:']) {
      expect([prefix, keys.some((k) => k.startsWith(prefix))]).toEqual([prefix, true]);
    }
    // The caller is a manager of the listed projects: one User record, the fields of both paths merged into it.
    expect(snapshot[`User:${DEMO_IDS.users.architect}`]).toMatchObject({ email: 'architect@demo.test', currentOrganizationId: DEMO_IDS.organizations.atelierDemo });
  });
});

describe('Mutation.updateProjectTrade through the cache', () => {
  it('renames the trade in every cached template of it, as the server answers, without a refetch', async () => {
    const input = { name: 'Gros œuvre et fondations', number: '01', shortName: 'GOF' };
    const { before, cached, server } = await afterMutation((client) => renameTrade(client, PRJ.residence, TRD.residence['01'], input));
    expect(cached).toEqual(server);
    const ofTrade = (data: DashboardQuery) => projectIn(data, PRJ.residence).templates.filter((x) => x.trade.id === TRD.residence['01']);
    expect(ofTrade(before).map((x) => x.trade.name)).toEqual(['Gros œuvre', 'Gros œuvre', 'Gros œuvre']);
    expect(ofTrade(cached).map((x) => x.trade.name)).toEqual([input.name, input.name, input.name]);
    expect(projectIn(cached, PRJ.residence).trades.find((x) => x.id === TRD.residence['01'])!.shortName).toBe('GOF');
  });
});

describe('Mutation.addTemplate through the cache', () => {
  it('adds a main template to the cached project\'s templates, with the project\'s statistics as the server has them', async () => {
    const { before, cached, server } = await afterMutation((client) => addTemplate(client, PRJ.residence, TRD.residence['05'], 15000));
    expect(cached).toEqual(server);
    const [was, now] = [projectIn(before, PRJ.residence), projectIn(cached, PRJ.residence)];
    expect(now.templates).toHaveLength(was.templates.length + 1);
    expect(now.templates[now.templates.length - 1]).toMatchObject({ isSlice: false, budgets: { value: 15000 }, trade: { id: TRD.residence['05'], name: 'Plâtrerie' } });
    expect(now.statistics.budgets.total).toBe(was.statistics.budgets.total + 15000);
  });

  it('adds a slice to the cached project\'s templates and to its main template\'s slices', async () => {
    let sliceId = '';
    const { before, cached, server } = await afterMutation(async (client) => {
      sliceId = (await addTemplate(client, PRJ.residence, TRD.residence['01'])).template.id;
    });
    expect(cached).toEqual(server);
    const main = (data: DashboardQuery) => projectIn(data, PRJ.residence).templates.find((x) => x.id === TPL.residenceGrosOeuvre)!;
    expect(main(before).slices.map((s) => s.id)).not.toContain(sliceId);
    expect(main(cached).slices.map((s) => s.id)).toEqual([TPL.residenceGrosOeuvreTranche1, TPL.residenceGrosOeuvreTranche2, sliceId]);
    expect(projectIn(cached, PRJ.residence).templates.map((x) => x.id)).toContain(sliceId);
  });
});

describe('Mutation.deleteTemplate through the cache', () => {
  it('takes a slice out of the cached project\'s templates and its main template\'s slices', async () => {
    const { before, cached, server } = await afterMutation((client) =>
      client.mutate({ mutation: DeleteTemplateDocument, variables: { projectId: PRJ.residence, templateId: TPL.residenceGrosOeuvreTranche2 } }));
    expect(cached).toEqual(server);
    expect(projectIn(before, PRJ.residence).templates.map((x) => x.id)).toContain(TPL.residenceGrosOeuvreTranche2);
    expect(projectIn(cached, PRJ.residence).templates.map((x) => x.id)).not.toContain(TPL.residenceGrosOeuvreTranche2);
    const main = projectIn(cached, PRJ.residence).templates.find((x) => x.id === TPL.residenceGrosOeuvre)!;
    expect(main.slices.map((s) => s.id)).not.toContain(TPL.residenceGrosOeuvreTranche2);
  });

  it('takes a main template and its slices out of the cached list; their ids let the client evict them, and the cache stays whole', async () => {
    const setup = newClient();
    const main = await addTemplate(setup, PRJ.school, TRD.school['05']);
    const slice = await addTemplate(setup, PRJ.school, TRD.school['05']);
    let deleted: string[] = [];
    const { client, cached, server } = await afterMutation(async (c) => {
      const { data } = await c.mutate({ mutation: DeleteTemplateDocument, variables: { projectId: PRJ.school, templateId: main.template.id } });
      deleted = data!.deleteTemplate.deletedTemplateIds;
    });
    expect(deleted).toEqual([main.template.id, slice.template.id]);
    expect(cached).toEqual(server);
    expect(projectIn(cached, PRJ.school).templates.map((x) => x.id)).toEqual(expect.not.arrayContaining(deleted));
    for (const id of deleted) expect(client.cache.evict({ id: client.cache.identify({ __typename: 'Template', id }) })).toBe(true);
    client.cache.gc();
    expect(cachedDashboard(client)).toEqual(server);
  });
});

describe('Mutation.createProjectTrade and Mutation.deleteProjectTrade through the cache', () => {
  it('adds the new trade to the cached project\'s trades, then takes it out', async () => {
    let tradeId = '';
    const created = await afterMutation(async (client) => {
      const { data } = await client.mutate({ mutation: CreateProjectTradeDocument, variables: { projectId: PRJ.school, input: { name: 'Peinture', number: '09', shortName: 'PE' } } });
      tradeId = data!.createProjectTrade.trade.id;
    });
    expect(created.cached).toEqual(created.server);
    expect(projectIn(created.cached, PRJ.school).trades).toHaveLength(projectIn(created.before, PRJ.school).trades.length + 1);
    expect(projectIn(created.cached, PRJ.school).trades.at(-1)).toMatchObject({ id: tradeId, name: 'Peinture', number: '09' });

    const deleted = await afterMutation((client) => client.mutate({ mutation: DeleteProjectTradeDocument, variables: { projectId: PRJ.school, tradeId } }));
    expect(deleted.cached).toEqual(deleted.server);
    expect(projectIn(deleted.cached, PRJ.school).trades.map((x) => x.id)).not.toContain(tradeId);
    expect(projectIn(deleted.cached, PRJ.school).trades).toEqual(projectIn(created.before, PRJ.school).trades);
  });
});

describe('Mutation.inviteContractors through the cache', () => {
  it('adds the documents to the cached template, with its stats and the project\'s statistics as the server counts them', async () => {
    const { before, cached, server } = await afterMutation((client) => invite(client, PRJ.residence, TPL.residenceCharpente, [
      { name: 'Charpentes Alpines', email: 'devis@charpentes-alpines.test' }, { name: 'Bois Debout', email: 'contact@bois-debout.test' },
    ]));
    expect(cached).toEqual(server);
    const template = (data: DashboardQuery) => projectIn(data, PRJ.residence).templates.find((x) => x.id === TPL.residenceCharpente)!;
    expect(template(cached).documents).toHaveLength(template(before).documents.length + 2);
    // Both invited by one request: same creation time, so their order is the ids'.
    expect(template(cached).documents.slice(-2).map((d) => [d.contractor.name, d.state]).sort()).toEqual([['Bois Debout', 'PENDING'], ['Charpentes Alpines', 'PENDING']]);
    expect(template(cached).stats.contractorsPending).toBe(template(before).stats.contractorsPending + 2);
    expect(projectIn(cached, PRJ.residence).statistics.contractors).toBe(projectIn(before, PRJ.residence).statistics.contractors + 2);
  });
});

describe('Mutation.switchOrganization through the cache', () => {
  it('changes the cached me.currentOrganization', async () => {
    const { before, cached, server } = await afterMutation((client) =>
      client.mutate({ mutation: SwitchOrganizationDocument, variables: { organizationId: DEMO_IDS.organizations.atelierNord } }));
    try {
      expect(cached).toEqual(server);
      expect(before.me.currentOrganization).toEqual({ __typename: 'Organization', id: DEMO_IDS.organizations.atelierDemo, name: 'Atelier Demo' });
      expect(cached.me).toMatchObject({ currentOrganizationId: DEMO_IDS.organizations.atelierNord, currentOrganization: { id: DEMO_IDS.organizations.atelierNord, name: 'Atelier Nord' } });
    } finally {
      await newClient().mutate({ mutation: SwitchOrganizationDocument, variables: { organizationId: DEMO_IDS.organizations.atelierDemo } });
    }
  });
});

describe('Mutation.archiveProject through the cache', () => {
  it('marks the cached project archived, as the server answers it', async () => {
    const client = newClient();
    const { data } = await client.mutate({ mutation: CreateProjectDocument, variables: { input: {
      name: 'Gymnase', constructionType: 'public_building', managers: [{ id: DEMO_IDS.users.architect }], tradeListId: DEMO_IDS.tradeLists.standard, responseType: 'QUOTE',
    } } });
    const id = data!.createProject.project.id;
    const page = await projectPage(client, id);
    expect(page.archived).toBe(false);
    const sent = requests;
    await client.mutate({ mutation: ArchiveProjectDocument, variables: { id } });
    const cached = client.readQuery({ query: ProjectPageDocument, variables: { id } });
    expect(requests).toBe(sent + 1);
    const server = await projectPage(newClient(), id);
    expect(cached!.project).toEqual(server);
    expect(cached!.project).toMatchObject({ archived: true, archivedAt: expect.any(String) });
  });
});

describe('a crawl of every query the schema offers', () => {
  it('finds no id under two __typenames, over every Query field and every object type that has an id', async () => {
    // The demo data holds no webhook endpoint: one, with an attempt (its test event, answered 404 by the service).
    const created = await request(t.url, 'POST', '/api/svc/v1/webhooks', {
      token, body: { organization_id: DEMO_IDS.organizations.atelierDemo, url: `${t.url}/webhook-sink`, event_types: ['contractor.answered'] },
    });
    const webhookId = created.body.webhook.id as string;
    await request(t.url, 'POST', `/api/svc/v1/webhooks/${webhookId}/test`, { token });
    await eventually(async () => (await request(t.url, 'GET', `/api/svc/v1/webhooks/${webhookId}/attempts`, { token })).body.attempts.length > 0, 'an attempt');
    const args = demoRootArguments();
    args.webhook.push({ id: webhookId });
    args.webhookAttempts.push({ webhookId });
    const result = await crawl(t.url, token, { rootArguments: args });
    expect(idsUnderSeveralTypenames(result)).toEqual([]);

    const schema = await introspect(t.url, token);
    const queryFields = Object.keys(schema.getQueryType()!.getFields());
    expect(result.rootFields.sort()).toEqual(queryFields.sort());
    // Every object type with an id that a query reaches was met, so the count above covers them all.
    const reachable = new Set<string>();
    const visit = (type: GraphQLObjectType) => {
      if (reachable.has(type.name)) return;
      reachable.add(type.name);
      for (const field of Object.values(type.getFields())) {
        const named = getNamedType(field.type);
        if (isObjectType(named)) visit(named);
      }
    };
    visit(schema.getQueryType()!);
    const keyed = [...reachable].filter((name) => 'id' in (schema.getType(name) as GraphQLObjectType).getFields()).sort();
    expect(keyed).toEqual(expect.arrayContaining(['Contractor', 'Document', 'DocumentVersion', 'Organization', 'Project', 'ProjectStatistics', 'ProjectTrade',
      'Template', 'TemplateStats', 'TradeList', 'TradeListTrade', 'User']));
    for (const name of keyed) expect([name, (result.objectsByType.get(name) ?? 0) > 0]).toEqual([name, true]);
    expect(result.typenamesById.size).toBeGreaterThan(100);
  }, 60_000);
});

describe('the live dashboard (Subscription.projectChanged) through Apollo Client', () => {
  it('updates the cached dashboard when a contractor answers, without a refetch', async () => {
    const client = newClient();
    const before = projectIn(await dashboard(client), PRJ.school);
    const updates: string[][] = [];
    const stop = liveDashboard(client, (change) => updates.push(change.changes), [PRJ.school]);
    try {
      await eventually(async () => (await t.app.metrics.subscriptionsActive.get()).values.some((v) => v.value === 1), 'subscribed');
      const sent = requests;
      const [document] = await queryRows<{ id: string }>(t.databaseUrl, `select d.id from document d join template t on t.id = d.template_id
        where t.project_id = $1 and not exists (select 1 from document_version v where v.document_id = d.id) order by d.id limit 1`, [PRJ.school]);
      await queryRows(t.databaseUrl, `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
        values (gen_random_uuid(), now(), now(), $1, 1, 'ANSWERED', 4321, 0, false, true, now())`, [document.id]);
      await eventually(async () => updates.length > 0, 'an update');

      const cached = projectIn(cachedDashboard(client), PRJ.school);
      const server = projectIn(await dashboard(newClient()), PRJ.school);
      expect(updates).toEqual([['VERSION']]);
      expect(requests).toBe(sent + 1); // the server's dashboard above, through a client of its own
      expect(cached).toEqual(server);
      expect(cached.statistics.answered).toBe(before.statistics.answered + 1);
    } finally {
      stop();
      client.stop();
    }
  });
});

