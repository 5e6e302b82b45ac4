import DataLoader from 'dataloader';
import type { ServiceContext } from '../platform/service-context';
import { argumentLoader, mapLoader, readAheadLoader } from '../platform/graphql/dataloaders';
import type { OperationSelection } from '../platform/graphql/selection';
import type { ContractorDetailView } from './contractors/contractor.service';
import { OrganizationService, type OrganizationView, type UserView } from './organizations/organization.service';
import { DocumentService, VERSION_FIELDS, type PartialDocumentFields, type PartialVersionFields } from './documents/document.service';
import { ProjectTradeService, type ProjectTradeView } from './trades/project-trade.service';
import { TemplateService, type TemplateFields } from './templates/template.service';
import { ProjectService, type ProjectFields } from './projects/project.service';
import { StatisticsService, type ProjectStatisticsView, type TemplateStatsView } from './statistics/statistics.service';
import { LevelingService } from './leveling/leveling.service';
import type { ProjectLeveling, TemplateLeveling } from './leveling/leveling.output';
import { TradeListService, type TradeListTradeView } from './trades/trade-list.service';

/**
 * A caller sees only the few organizations they administer: the first request for any of them loads them all,
 * in one statement, so that `me`, projects and payloads asking at different moments never cost a second one
 * (with a loader per id, which ids come first would decide how many batches run).
 */
function callerOrganizations(organizations: OrganizationService, sc: ServiceContext) {
  const all = new DataLoader<'all', Map<string, OrganizationView>>(async (keys) => {
    const views = await organizations.views(sc.caller.adminOrganizationIds);
    const byId = new Map(views.map((v) => [v.id, v]));
    return keys.map(() => byId);
  });
  return {
    load: async (id: string): Promise<OrganizationView | null> => (await all.load('all')).get(id.toLowerCase()) ?? null,
    loadMany: async (ids: readonly string[]): Promise<Array<OrganizationView | null>> => {
      const byId = await all.load('all');
      return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
    },
    clearAll: () => all.clearAll(),
  };
}

/**
 * One DataLoader per relation, made per request: each resolves a whole level of a query with one batched
 * statement, and caches for that request only. What a statement computes besides the rows (a document's state,
 * whether a version has files) it computes only when the operation selects it: `selection` is read when the
 * batch runs, once execution has begun.
 */
export function createLoaders(sc: ServiceContext, selection: OperationSelection) {
  const projects = new ProjectService(sc);
  const organizations = new OrganizationService(sc);
  const statistics = new StatisticsService(sc);
  const trades = new ProjectTradeService(sc);
  const templates = new TemplateService(sc);
  const documents = new DocumentService(sc);
  const tradeLists = new TradeListService(sc);
  const leveling = new LevelingService(sc);
  const documentFields = () => ({
    state: selection.has('Document', 'state'),
    intention: selection.has('Document', 'intention'),
    dceDownloadedAt: selection.has('Document', 'dceDownloadedAt'),
  });
  const versionFields = () => VERSION_FIELDS.filter((f) => selection.has('DocumentVersion', f));
  const documentsLoader = readAheadLoader<PartialDocumentFields[]>('documents', (ids) => documents.documentsByTemplate(ids, documentFields()), []);
  const versionsLoader = readAheadLoader<PartialVersionFields[]>('versions', (ids) => documents.versionsByDocument(ids, versionFields()), []);
  // A contractor is never absent from its document's organization: absent from the answer read ahead, it was
  // committed after that statement began.
  const contractorLoader = readAheadLoader<ContractorDetailView | null>('contractor', (ids) => documents.contractorsByIds(ids), null, false);
  // Every template has its stats row from its creation on: absent from the rows read ahead, the template was
  // created after that statement began.
  const templateStatsLoader = readAheadLoader<TemplateStatsView | null>('templateStats', (ids) => statistics.templateStats(ids), null, false);

  /**
   * A projects' templates, and when the operation selects them, the levels below read at the same time by the
   * same project ids, each in a statement of its own on its own connection: the templates' stats and documents,
   * the documents' versions and contractors. Level by level, each statement would wait for the one above and for
   * the execution of its rows (the dashboard: four round trips one after the other); read ahead, they overlap.
   * The same rows and tenancy as the level's own loader; offered keys are those the level above answered.
   */
  const templatesWithReadAhead = async (projectIds: readonly string[]): Promise<Map<string, TemplateFields[]>> => {
    const rows = templates.templatesByProject(projectIds);
    // Only for an operation whose selection is known: a subscription's deliveries (selection unknown, every field
    // counted as selected) run outside the operations' turns, and would read every level of every project.
    const documentsAsked = selection.known && selection.has('Template', 'documents');
    const statsAsked = selection.known && selection.has('Template', 'stats');
    if (!documentsAsked && !statsAsked) return rows;
    const stats = statsAsked ? statistics.templateStatsByProject(projectIds) : null;
    const versions = documentsAsked && selection.has('Document', 'versions') ? documents.versionsByProject(projectIds, versionFields()) : null;
    const contractors = documentsAsked && selection.has('Document', 'contractor') ? documents.contractorsByProject(projectIds) : null;
    const documentRows = documentsAsked ? documents.documentsByProject(projectIds, documentFields()).then((byTemplate) => {
      const all = [...byTemplate.values()].flat();
      if (versions) versionsLoader.offer(all.map((d) => d.id), versions);
      if (contractors) contractorLoader.offer(all.map((d) => d.contractorId), contractors);
      return byTemplate;
    }) : null;
    for (const p of [stats, versions, contractors, documentRows]) p?.catch(() => undefined);
    try {
      const found = await rows;
      const templateIds = [...found.values()].flat().map((t) => t.id);
      if (documentRows) documentsLoader.offer(templateIds, documentRows);
      if (stats) templateStatsLoader.offer(templateIds, stats);
      return found;
    } finally {
      // The templates wait for the levels read ahead to arrive, not to succeed (a level's failure stays that
      // level's own, at its own path): then every level below resolves without a promise per record (`loadNow`).
      // What the overlap of execution and statements gained on two cores, the promises cost back
      // (docs/benchmarks.md). Waited for even when the templates failed: no offer may land after this request's
      // loaders were cleared (a later mutation's payload).
      await Promise.allSettled([documentRows, versions, contractors, stats]);
    }
  };

  return {
    project: mapLoader<ProjectFields | null>('project', (ids) => projects.fieldsByIds(ids), null),
    organization: callerOrganizations(organizations, sc),
    managers: mapLoader<UserView[]>('managers', (ids) => projects.managersByProject(ids), []),
    templates: mapLoader<TemplateFields[]>('templates', templatesWithReadAhead, []),
    documents: documentsLoader,
    versions: versionsLoader,
    contractor: contractorLoader,
    trades: mapLoader<ProjectTradeView[]>('trades', (ids) => trades.tradesByProject(ids), []),
    tradeListTrades: mapLoader<TradeListTradeView[]>('tradeListTrades', (ids) => tradeLists.tradesByList(ids), []),
    projectStatistics: mapLoader<ProjectStatisticsView | null>('projectStatistics', (ids) => statistics.projectStatistics(ids), null),
    templateStats: templateStatsLoader,
    projectLeveling: argumentLoader<ProjectLeveling>('projectLeveling', (ids, threshold) => leveling.projects(ids, threshold)),
    templateLeveling: argumentLoader<TemplateLeveling>('templateLeveling', (ids, threshold) => leveling.templates(ids, threshold)),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;

