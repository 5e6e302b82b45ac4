import DataLoader from 'dataloader';
import type { GraphQLSchema } from 'graphql';
import type { ContractorDetailView } from '../services/contractor.service';
import { OrganizationService, type OrganizationView, type UserView } from '../services/organization.service';
import { DocumentService, VERSION_FIELDS, type DocumentRecord, type VersionRecord } from '../services/document.service';
import { ProjectTradeService, type ProjectTradeView } from '../services/project-trade.service';
import { TemplateService, type TemplateFields } from '../services/template.service';
import { ProjectService, type ProjectFields } from '../services/project.service';
import type { ServiceContext } from '../services/service-context';
import { StatisticsService, type ProjectStatisticsView, type TemplateStatsView } from '../services/statistics.service';
import { LevelingService } from '../services/leveling.service';
import type { ProjectLeveling, TemplateLeveling } from '../services/outputs/leveling.output';
import { TradeListService, type TradeListTradeView } from '../services/trade-list.service';
import type { OperationSelection } from './selection';

/** A loader from a batch function that answers a Map; missing keys resolve to `fallback`. */
function mapLoader<V>(batch: (keys: readonly string[]) => Promise<Map<string, V>>, fallback: V): DataLoader<string, V> {
  return new DataLoader<string, V>(async (keys) => {
    const map = await batch(keys);
    return keys.map((k) => map.get(k) ?? fallback);
  });
}

/**
 * Loaders of figures that take an argument (the leveling's threshold): one loader per value asked in the
 * request, so that a query asking every project for one threshold batches them all in one statement.
 */
function argumentLoader<V>(batch: (keys: readonly string[], argument: number) => Promise<Map<string, V>>) {
  const loaders = new Map<number, DataLoader<string, V | null>>();
  return {
    load(id: string, argument: number): Promise<V | null> {
      let loader = loaders.get(argument);
      if (!loader) {
        loader = mapLoader<V | null>((ids) => batch(ids, argument), null);
        loaders.set(argument, loader);
      }
      return loader.load(id);
    },
    clearAll: () => loaders.clear(),
  };
}

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
  return {
    project: mapLoader<ProjectFields | null>((ids) => projects.fieldsByIds(ids), null),
    organization: callerOrganizations(organizations, sc),
    managers: mapLoader<UserView[]>((ids) => projects.managersByProject(ids), []),
    templates: mapLoader<TemplateFields[]>((ids) => templates.templatesByProject(ids), []),
    documents: mapLoader<DocumentRecord[]>((ids) => documents.documentsByTemplate(ids, {
      state: selection.has('Document', 'state'),
      intention: selection.has('Document', 'intention'),
      dceDownloadedAt: selection.has('Document', 'dceDownloadedAt'),
    }), []),
    versions: mapLoader<VersionRecord[]>((ids) => documents.versionsByDocument(ids, VERSION_FIELDS.filter((f) => selection.has('DocumentVersion', f))), []),
    contractor: mapLoader<ContractorDetailView | null>((ids) => documents.contractorsByIds(ids), null),
    trades: mapLoader<ProjectTradeView[]>((ids) => trades.tradesByProject(ids), []),
    tradeListTrades: mapLoader<TradeListTradeView[]>((ids) => tradeLists.tradesByList(ids), []),
    projectStatistics: mapLoader<ProjectStatisticsView | null>((ids) => statistics.projectStatistics(ids), null),
    templateStats: mapLoader<TemplateStatsView | null>((ids) => statistics.templateStats(ids), null),
    projectLeveling: argumentLoader<ProjectLeveling>((ids, threshold) => leveling.projects(ids, threshold)),
    templateLeveling: argumentLoader<TemplateLeveling>((ids, threshold) => leveling.templates(ids, threshold)),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;

/** A template of a project, through the project's templates (the loader of `Project.templates`); null when gone. */
export async function templateOf(loaders: Loaders, projectId: string, templateId: string): Promise<TemplateFields | null> {
  return (await loaders.templates.load(projectId)).find((t) => t.id === templateId) ?? null;
}

/**
 * A mutation's payload shows the records as the mutation left them: once a mutation field has run, the request's
 * loaders forget what they loaded before it (an earlier mutation's payload of the same request). Mutation
 * fields run one after the other, each payload before the next mutation.
 */
export function freshLoadsAfterMutations(schema: GraphQLSchema): GraphQLSchema {
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) {
    const resolve = field.resolve;
    if (!resolve) continue;
    field.resolve = async (root, args, context: { loaders: Loaders }, info) => {
      const result = await resolve(root, args, context, info);
      for (const loader of Object.values(context.loaders)) loader.clearAll();
      return result;
    };
  }
  return schema;
}
