import DataLoader from 'dataloader';
import type { GraphQLSchema } from 'graphql';
import type { ContractorDetailView } from '../../modules/invitations/contractor.service';
import { OrganizationService, type OrganizationView, type UserView } from '../../modules/organizations/organization.service';
import { DocumentService, VERSION_FIELDS, type DocumentRecord, type VersionRecord } from '../../modules/documents/document.service';
import { ProjectTradeService, type ProjectTradeView } from '../../modules/trades/project-trade.service';
import { TemplateService, type TemplateFields } from '../../modules/templates/template.service';
import { ProjectService, type ProjectFields } from '../../modules/projects/project.service';
import type { ServiceContext } from '../service-context';
import { StatisticsService, type ProjectStatisticsView, type TemplateStatsView } from '../../modules/statistics/statistics.service';
import { LevelingService } from '../../modules/leveling/leveling.service';
import type { ProjectLeveling, TemplateLeveling } from '../../modules/leveling/leveling.output';
import { TradeListService, type TradeListTradeView } from '../../modules/trades/trade-list.service';
import type { OperationSelection } from './selection';

/** A loader from a batch function that answers a Map; missing keys resolve to `fallback`. */
function mapLoader<V>(batch: (keys: readonly string[]) => Promise<Map<string, V>>, fallback: V): DataLoader<string, V> {
  return new DataLoader<string, V>(async (keys) => {
    const map = await batch(keys);
    return keys.map((k) => map.get(k) ?? fallback);
  });
}

/**
 * A loader whose values a parent level may read ahead: `offer(keys, values)` says that the values of those keys
 * are on their way (a statement already running, answering a Map); a batch waits for them instead of asking the
 * database again, and runs its own statement only for the keys nobody offered. Missing keys resolve to `fallback`.
 *
 * `absentMeansNone`: a key offered but absent from the offered answer has no value (a document without
 * versions). Otherwise an absent key is one the offered statement could not see (it started before the row
 * above it was committed: a contractor invited after the contractors' statement began, with a document the
 * documents' statement saw), and the loader's own statement reads it.
 */
export function readAheadLoader<V>(batch: (keys: readonly string[]) => Promise<Map<string, V>>, fallback: V, absentMeansNone = true) {
  const offered = new Map<string, Promise<Map<string, V>>>();
  // What offered statements answered, once they have: read without a promise.
  const arrived = new WeakMap<Promise<Map<string, V>>, Map<string, V>>();
  // Whether an offered answer settles `key`: its absence does only when absence means no value.
  const settles = (values: Map<string, V>, key: string) => absentMeansNone || values.has(key);
  const loader = new DataLoader<string, V | Error>(async (keys) => {
    // Where each key's value comes from, decided once: a key offered while this batch waits is answered by it.
    const from = keys.map((k) => offered.get(k));
    const sources = [...new Set(from.filter((p) => p !== undefined))];
    // Each source settles on its own: one statement's failure fails its own keys, not the others of the batch.
    const read = await Promise.allSettled(sources);
    const bySource = new Map(sources.map((p, i) => [p, read[i]]));
    const offeredAnswer = keys.map((k, i) => {
      const source = from[i] && bySource.get(from[i]);
      return source && (source.status === 'rejected' || settles(source.value, k)) ? source : undefined;
    });
    const own = keys.filter((_, i) => !offeredAnswer[i]);
    const [mine] = await Promise.allSettled([own.length ? batch(own) : Promise.resolve(new Map<string, V>())]);
    return keys.map((k, i) => {
      const answer = offeredAnswer[i] ?? mine;
      if (answer.status === 'rejected') {
        // A failed read-ahead is not kept: a later load asks again.
        if (from[i] && offered.get(k) === from[i]) offered.delete(k);
        return answer.reason instanceof Error ? answer.reason : new Error(String(answer.reason));
      }
      return answer.value.get(k) ?? fallback;
    });
  });
  return {
    load: (key: string) => loader.load(key) as Promise<V>,
    /**
     * The value itself when the statement that read it ahead has answered, else the loader's promise. A
     * dashboard's thousands of documents resolve their versions and contractors this way without a promise
     * each (promises, and the executor's handling of them, were a good part of what such a query allocated).
     */
    loadNow(key: string): V | Promise<V> {
      const source = offered.get(key);
      const values = source && arrived.get(source);
      if (values && settles(values, key)) return values.get(key) ?? fallback;
      return loader.load(key) as Promise<V>;
    },
    offer(keys: Iterable<string>, values: Promise<Map<string, V>>): void {
      // Read ahead, perhaps never waited for (the request failed first): its failure must not go unhandled.
      values.then((m) => arrived.set(values, m), () => undefined);
      for (const key of keys) if (!offered.has(key)) offered.set(key, values);
    },
    clearAll(): void {
      offered.clear();
      loader.clearAll();
    },
  };
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
  const documentFields = () => ({
    state: selection.has('Document', 'state'),
    intention: selection.has('Document', 'intention'),
    dceDownloadedAt: selection.has('Document', 'dceDownloadedAt'),
  });
  const versionFields = () => VERSION_FIELDS.filter((f) => selection.has('DocumentVersion', f));
  const documentsLoader = readAheadLoader<DocumentRecord[]>((ids) => documents.documentsByTemplate(ids, documentFields()), []);
  const versionsLoader = readAheadLoader<VersionRecord[]>((ids) => documents.versionsByDocument(ids, versionFields()), []);
  // A contractor is never absent from its document's organization: absent from the answer read ahead, it was
  // committed after that statement began.
  const contractorLoader = readAheadLoader<ContractorDetailView | null>((ids) => documents.contractorsByIds(ids), null, false);
  // Every template has its stats row from its creation on: absent from the rows read ahead, the template was
  // created after that statement began.
  const templateStatsLoader = readAheadLoader<TemplateStatsView | null>((ids) => statistics.templateStats(ids), null, false);

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
    project: mapLoader<ProjectFields | null>((ids) => projects.fieldsByIds(ids), null),
    organization: callerOrganizations(organizations, sc),
    managers: mapLoader<UserView[]>((ids) => projects.managersByProject(ids), []),
    templates: mapLoader<TemplateFields[]>(templatesWithReadAhead, []),
    documents: documentsLoader,
    versions: versionsLoader,
    contractor: contractorLoader,
    trades: mapLoader<ProjectTradeView[]>((ids) => trades.tradesByProject(ids), []),
    tradeListTrades: mapLoader<TradeListTradeView[]>((ids) => tradeLists.tradesByList(ids), []),
    projectStatistics: mapLoader<ProjectStatisticsView | null>((ids) => statistics.projectStatistics(ids), null),
    templateStats: templateStatsLoader,
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
