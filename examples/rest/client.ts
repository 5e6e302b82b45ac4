/**
 * A REST client generated from the OpenAPI document, as a legacy consumer makes one:
 *
 *   npx openapi-typescript http://localhost:3000/api/svc/v1/openapi.json -o openapi.ts   (here: generated/openapi.ts)
 *   npm install openapi-fetch
 *
 * `tour` calls every operation of the interface once and reads the fields of each answer. It compiles under
 * `strict` with no cast and no `!` (test/openapi-client.test.ts), and the same test runs it against the
 * service over the demo data.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/openapi';

export type Project = components['schemas']['Project'];
export type Template = components['schemas']['Template'];
export type Organization = components['schemas']['Organization'];

/** The body of a 2xx answer; an error answer throws with its status and body. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${result.response.url}: ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

/** A 204 answer, or a throw. */
function noContent(result: { error?: unknown; response: Response }): number {
  if (result.response.status !== 204) throw new Error(`${result.response.url}: ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.response.status;
}

export interface TourIds {
  projectId: string;
  templateId: string;
  documentId: string;
  contractorId: string;
  userId: string;
  organizationId: string;
  tradeListId: string;
  tradeListTradeId: string;
  siret: string;
  /** Where the tour's webhook endpoint points (its deliveries may fail: only their attempts are read). */
  webhookUrl: string;
}

/**
 * Calls the 35 operations (36 in the document: #16 with and without a version) and returns what it read;
 * `fetch` lets a test look at every answer.
 */
export async function tour(baseUrl: string, accessToken: string, ids: TourIds, fetch: typeof globalThis.fetch = globalThis.fetch) {
  const api = createClient<paths>({ baseUrl, fetch, headers: { Authorization: `Bearer ${accessToken}` } });
  const project = { path: { projectId: ids.projectId } };
  const template = { path: { projectId: ids.projectId, templateId: ids.templateId } };
  const read: Record<string, unknown> = {};

  // #1-#4 projects
  const page = ok(await api.GET('/api/svc/v1/projects', { params: { query: { limit: 2 } } }));
  read.projects = { names: page.projects.map((p) => p.name), next: page.next_cursor ?? null, total: page.total_count ?? null };
  const first: Project = ok(await api.GET('/api/svc/v1/projects/{projectId}', { params: project })).project;
  read.project = { id: first.id, legacyId: first.legacy_id, manager: first.managers[0].email, vat: first.scopes?.vat ?? null, zip: first.site_address?.zip_code ?? null };
  const created = ok(await api.POST('/api/svc/v1/projects', {
    body: {
      name: 'Client tour', construction_type: 'office', response_type: 'DPGF', trade_list_id: ids.tradeListId,
      managers: [{ id: ids.userId }], scopes: { vat: 20, currency: 'EUR' },
    },
  })).project;
  const archived = ok(await api.PUT('/api/svc/v1/projects/{projectId}/archive', { params: { path: { projectId: created.id } } })).project;
  read.created = { name: created.name, tradeListId: created.trade_list_id, archived: archived.archived, archivedAt: archived.archived_at };

  // #5 statistics (alias path: one operation, servers /api and /)
  const statistics = ok(await api.GET('/api/svc/v1/projects/{projectId}/statistics', { params: project })).project.statistics;
  read.statistics = { answered: statistics.answered, deviation: statistics.budgets.project_deviation.percent };
  // Bid leveling (issue 13, an extension beside the interface)
  // Its 200 may also be the .xlsx or CSV tabulation (a string): JSON is what this call asks for.
  const levelingBody = ok(await api.GET('/api/svc/v1/projects/{projectId}/leveling', { params: project }));
  if (typeof levelingBody === 'string') throw new Error('expected the JSON leveling');
  const { leveling } = levelingBody;
  read.leveling = { lots: leveling.totals.lots, lowest: leveling.totals.lowest, retained: leveling.totals.retained_deviation.percent };

  // #6-#9 project trades
  const trades = ok(await api.GET('/api/svc/v1/projects/{projectId}/trades', { params: project })).trades;
  const trade = ok(await api.POST('/api/svc/v1/projects/{projectId}/trades', { params: project, body: { name: 'Serrurerie', number: '90', short_name: 'SE' } })).trade;
  const updated = ok(await api.PUT('/api/svc/v1/projects/{projectId}/trades/{tradeId}', {
    params: { path: { projectId: ids.projectId, tradeId: trade.id } }, body: { name: 'Serrurerie', number: '90', short_name: 'SER', comment: 'portails' },
  })).trade;
  read.trades = { count: trades.length, first: trades[0].short_name, comment: updated.comment };

  // #10-#16 templates
  const templates = ok(await api.GET('/api/svc/v1/projects/{projectId}/templates', { params: { ...project, query: { limit: 1 } } }));
  const record: Template = templates.templates[0];
  read.templates = { trade: record.trade.name, answers: record.stats.contractors_answers, budget: record.budgets.value, total: templates.total_count ?? null };
  const added = ok(await api.POST('/api/svc/v1/projects/{projectId}/templates', { params: project, body: { trade_id: trade.id, budget: 1000 } })).template;
  const withDocuments = ok(await api.GET('/api/svc/v1/projects/{projectId}/templates/documents', { params: project })).templates;
  read.withDocuments = withDocuments.map((t) => ({ name: t.name, documents: t.documents.length, contractor: t.documents[0]?.contractor.name ?? null }));
  const detail = ok(await api.GET('/api/svc/v1/projects/{projectId}/templates/{templateId}', { params: template })).template;
  const version = detail.documents[0].versions[0];
  read.detail = { name: detail.name, state: detail.documents[0].state, mandate: version.is_mandate, offer: version.sub_total - version.discount };
  const lot = ok(await api.GET('/api/svc/v1/projects/{projectId}/templates/{templateId}/leveling', { params: template })).leveling;
  read.lot = { name: lot.name, offers: lot.summary.offers, median: lot.summary.median };
  const invited = ok(await api.POST('/api/svc/v1/projects/{projectId}/templates/{templateId}/contractors', {
    params: { path: { projectId: ids.projectId, templateId: added.id } }, body: { contractors: [{ name: 'Serrurerie Blanc', email: 'contact@serrurerie-blanc.fr' }] },
  })).documents;
  read.invited = invited.map((d) => ({ email: d.contractor.email, state: d.state, intention: d.intention }));
  const document = { path: { ...template.path, documentId: ids.documentId } };
  const versions = ok(await api.GET('/api/svc/v1/projects/{projectId}/templates/{templateId}/documents/{documentId}/download', { params: document })).versions;
  const files = ok(await api.GET('/api/svc/v1/projects/{projectId}/templates/{templateId}/documents/{documentId}/download/{version}', {
    params: { path: { ...document.path, version: String(versions[0].version) } },
  })).files;
  read.downloads = { versions: versions.map((v) => v.files.length), file: files[0].name, expires: files[0].expires_at };
  const deletedTemplate = noContent(await api.DELETE('/api/svc/v1/projects/{projectId}/templates/{templateId}', { params: { path: { projectId: ids.projectId, templateId: added.id } } }));
  const deletedTrade = noContent(await api.DELETE('/api/svc/v1/projects/{projectId}/trades/{tradeId}', { params: { path: { projectId: ids.projectId, tradeId: trade.id } } }));
  read.deleted = [deletedTemplate, deletedTrade];

  // #17-#21 organizations
  const organizations: Organization[] = ok(await api.GET('/api/svc/v1/organizations')).organizations;
  read.organizations = organizations.map((o) => ({ name: o.name, siret: o.information.fiscal_number, city: o.addresses[0]?.city ?? null, users: o.users.length }));
  const user = ok(await api.GET('/api/svc/v1/organizations/users/{userId}', { params: { path: { userId: ids.userId } } })).user;
  const switched = ok(await api.POST('/api/svc/v1/organizations/switch', { body: { organization_id: ids.organizationId } })).organization;
  const organization = ok(await api.GET('/api/svc/v1/organizations/{organizationId}', { params: { path: { organizationId: ids.organizationId } } })).organization;
  const headquarter = ok(await api.GET('/api/svc/v1/organizations/headquarters/{organizationId}', { params: { path: { organizationId: ids.organizationId } } })).headquarter;
  read.organization = { user: user.organization_ids.length, switched: switched.id, name: organization.name, headquarter: headquarter.organizations.map((o) => o.name) };

  // #22-#24 directory and trade lists
  const contractor = ok(await api.GET('/api/svc/v1/contractors/{contractorId}', { params: { path: { contractorId: ids.contractorId } } })).contractor;
  const lists = ok(await api.GET('/api/svc/v1/trades/list')).trade_lists;
  const list = ok(await api.GET('/api/svc/v1/trades/list/{tradeListId}', { params: { path: { tradeListId: ids.tradeListId } } })).trade_list;
  read.directory = { contractor: contractor.information.fiscal_number, company: contractor.company_id, lists: lists.length, trades: list.trades.map((t) => t.number) };

  // #25, #32 identifiers
  const uuids = ok(await api.POST('/api/svc/v1/tools/ids-to-uuids', { body: { resources: [[first.legacy_id]] } })).resources;
  const legacy = ok(await api.POST('/api/internal/v1/tools/uuids-to-ids', { body: { resources: [[first.id]] } })).resources;
  read.identifiers = { uuid: uuids[0][0], legacy: legacy[0][0] };

  // #26-#28 partner roles
  const roles = ok(await api.GET('/api/svc/v1/pf/{userId}/roles', { params: { path: { userId: ids.userId } } })).roles;
  const assigned = ok(await api.POST('/api/svc/v1/pf/{userId}/roles', { params: { path: { userId: ids.userId } } })).roles;
  const removed = noContent(await api.DELETE('/api/svc/v1/pf/{userId}/roles', { params: { path: { userId: ids.userId } } }));
  read.roles = { before: roles.map((r) => r.code), after: assigned.map((r) => r.code), removed };

  // #29-#31 trade categories
  const byName = ok(await api.GET('/api/internal/v1/trades/mapping/{tradeName}', { params: { path: { tradeName: list.trades[0].name } } })).categories;
  const byService = ok(await api.GET('/api/internal/v1/trades/mapping/svc/{tradeId}', { params: { path: { tradeId: ids.tradeListTradeId } } })).categories;
  const byPartner = ok(await api.GET('/api/internal/v1/trades/mapping/partner/{tradeId}', { params: { path: { tradeId: '1001' } } })).categories;
  read.categories = [byName[0].code, byService[0].code, byPartner[0].code];

  // #33-#34 companies
  const contacts = ok(await api.GET('/api/internal/v1/company/contacts/{siret}', { params: { path: { siret: ids.siret } } }));
  const companyTrades = ok(await api.GET('/api/internal/v1/company/trades/{siret}', { params: { path: { siret: ids.siret } } }));
  read.companies = { contacts: contacts.companies.map((c) => c.contacts.length), sectors: companyTrades.companies[0].business_sectors };

  // #35 credits
  const usage = ok(await api.GET('/api/v1/credits-usage', { params: { query: { organization_id: ids.organizationId } } })).credits_usage;
  read.credits = { scope: usage.scope.type, from: usage.from, organizations: usage.organizations.map((o) => o.total) };

  // Webhooks (issue 26, an extension beside the interface)
  const hook = ok(await api.POST('/api/svc/v1/webhooks', { body: { organization_id: ids.organizationId, url: ids.webhookUrl, event_types: ['contractor.answered'] } }));
  const hooks = ok(await api.GET('/api/svc/v1/webhooks')).webhooks;
  const webhook = { path: { webhookId: hook.webhook.id } };
  const described = ok(await api.PUT('/api/svc/v1/webhooks/{webhookId}', { params: webhook, body: { description: 'ERP' } })).webhook;
  const rotated = ok(await api.POST('/api/svc/v1/webhooks/{webhookId}/rotate-secret', { params: webhook }));
  const testEvent = ok(await api.POST('/api/svc/v1/webhooks/{webhookId}/test', { params: webhook })).event;
  // Delivered in the background: the attempt is listed once made.
  let attempts = ok(await api.GET('/api/svc/v1/webhooks/{webhookId}/attempts', { params: { ...webhook, query: { limit: '10' } } })).attempts;
  for (let i = 0; i < 100 && attempts.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    attempts = ok(await api.GET('/api/svc/v1/webhooks/{webhookId}/attempts', { params: webhook })).attempts;
  }
  if (!attempts.length) throw new Error('the test event was not attempted');
  const again = ok(await api.POST('/api/svc/v1/webhooks/{webhookId}/attempts/{attemptId}/redeliver', {
    params: { path: { webhookId: hook.webhook.id, attemptId: attempts[0].id } },
  })).event;
  const one = ok(await api.GET('/api/svc/v1/webhooks/{webhookId}', { params: webhook })).webhook;
  const deletedHook = noContent(await api.DELETE('/api/svc/v1/webhooks/{webhookId}', { params: webhook }));
  read.webhooks = {
    listed: hooks.map((h) => h.url), secret: hook.secret.slice(0, 6), rotated: rotated.secret !== hook.secret, description: described.description,
    test: testEvent.type, attempted: attempts[0].event_id === testEvent.id, redelivered: again.id === testEvent.id, enabled: one.enabled, deleted: deletedHook,
  };
  return read;
}
