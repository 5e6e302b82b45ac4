import DataLoader from 'dataloader';
import { OrganizationService, type OrganizationView } from '../services/organization.service';
import { DocumentService, type ContractorView, type DocumentFields, type DocumentVersionView } from '../services/document.service';
import { ProjectTradeService, type ProjectTradeView } from '../services/project-trade.service';
import { TemplateService, type TemplateFields } from '../services/template.service';
import { ProjectService, type ManagerView } from '../services/project.service';
import type { ServiceContext } from '../services/service-context';
import { StatisticsService, type ProjectStatisticsView, type TemplateStatsView } from '../services/statistics.service';

/** A loader from a batch function that answers a Map; missing keys resolve to `fallback`. */
function mapLoader<V>(batch: (keys: readonly string[]) => Promise<Map<string, V>>, fallback: V): DataLoader<string, V> {
  return new DataLoader<string, V>(async (keys) => {
    const map = await batch(keys);
    return keys.map((k) => map.get(k) ?? fallback);
  });
}

/**
 * One DataLoader per relation, made per request: each resolves a whole level of a query with one batched
 * statement, and caches for that request only.
 */
export function createLoaders(sc: ServiceContext) {
  const projects = new ProjectService(sc);
  const organizations = new OrganizationService(sc);
  const statistics = new StatisticsService(sc);
  const trades = new ProjectTradeService(sc);
  const templates = new TemplateService(sc);
  const documents = new DocumentService(sc);
  return {
    organization: mapLoader<OrganizationView | null>(async (ids) => {
      const views = await organizations.views(ids.map((id) => id.toLowerCase()).filter((id) => sc.caller.adminOrganizationIds.includes(id)));
      return new Map(views.map((v) => [v.id, v]));
    }, null),
    managers: mapLoader<ManagerView[]>((ids) => projects.managersByProject(ids), []),
    templates: mapLoader<TemplateFields[]>((ids) => templates.templatesByProject(ids), []),
    documents: mapLoader<DocumentFields[]>((ids) => documents.documentsByTemplate(ids), []),
    versions: mapLoader<DocumentVersionView[]>((ids) => documents.versionsByDocument(ids), []),
    contractor: mapLoader<ContractorView | null>((ids) => documents.contractorsByIds(ids), null),
    trades: mapLoader<ProjectTradeView[]>((ids) => trades.tradesByProject(ids), []),
    projectStatistics: mapLoader<ProjectStatisticsView | null>((ids) => statistics.projectStatistics(ids), null),
    templateStats: mapLoader<TemplateStatsView | null>((ids) => statistics.templateStats(ids), null),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
