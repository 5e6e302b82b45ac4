import type { Time } from '../../platform/values/time';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { ownedBy } from '../../platform/database/tenancy';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError, ValidationError } from '../../platform/errors/errors';
import { Template } from './template.entity';
import { ProjectTrade } from '../trades/project-trade.entity';
import { visibleProject, writableProject } from '../access';
import { holdWritable } from '../project-locks';
import { DocumentService, type DocumentView } from '../documents/document.service';
import type { AddTemplateInput } from './template.input';
import { keysetPage, type Page } from '../../platform/database/pagination';
import type { ServiceContext } from '../../platform/service-context';
import { StatisticsService, type TemplateStatsView } from '../statistics/statistics.service';
import { amountOf } from '../../platform/money/money';
import { isUuid, uuidArraySql, uuidList } from '../../platform/database/uuid';
import { rowTime, type PgTimestamp } from '../../platform/database/rows';
import { groupUnder } from '../../platform/database/batch';

interface TemplateTradeView {
  id: string;
  name: string;
  number: string;
  shortName: string;
}

/** The template record of interface.md without `stats` (GraphQL resolves those through a loader). */
export interface TemplateFields {
  id: string;
  projectId: string;
  isSlice: boolean;
  /** Null when the template is not a slice. */
  slice: string | null;
  closedAt: Time | null;
  versionSaved: number;
  responseType: string | null;
  budgets: { value: number };
  itemisedSheet: { version: number; isDraft: boolean; hasAdditionalServices: boolean };
  trade: TemplateTradeView;
  endOfOfferDate: Time | null;
  consultationStartedAt: Time | null;
  foldOpened: boolean;
  favouriteConsultationId: string | null;
  selectedConsultationId: string | null;
  createdAt: Time;
  updatedAt: Time;
}

/** The template record of interface.md, field for field. */
export type TemplateView = Omit<TemplateFields, 'createdAt' | 'updatedAt'> & { stats: TemplateStatsView; createdAt: Time; updatedAt: Time };

/** "Template detail": the template's name and its contractors' documents. */
export interface TemplateDetailView {
  id: string;
  name: string;
  documents: DocumentView[];
}

/** An item of #12: a template with its contractors' documents. */
export interface TemplateDocumentsView {
  id: string;
  name: string;
  isSlice: boolean;
  slice: string | null;
  trade: TemplateTradeView;
  documents: DocumentView[];
}

/** What a delete removed: the template, then its slices; the main template of a removed slice. */
export interface RemovedTemplates {
  projectId: string;
  templateIds: string[];
  parentTemplateId: string | null;
}

export interface TemplateListOptions {
  first?: number | null;
  after?: string | null;
}

const EMPTY_STATS: TemplateStatsView = {
  deltaBudget: 0, contractors: 0, contractorsAnswers: 0, contractorsPending: 0, contractorsDeclined: 0,
  contractorsInRevision: 0, contractorsIntentionIsNo: 0, contractorsIntentionIsMaybe: 0,
};

/** A lot's display name: its trade's, followed by " - <slice name>" for a slice. */
export function lotName(tradeName: string, sliceName: string | null | undefined): string {
  return sliceName ? `${tradeName} - ${sliceName}` : tradeName;
}

/** The template's display name (see lotName). */
function templateName(t: Pick<TemplateFields, 'trade' | 'slice'>): string {
  return lotName(t.trade.name, t.slice);
}

interface TemplateRow {
  id: string;
  project_id: string;
  is_slice: boolean;
  slice_name: string | null;
  closed_at: PgTimestamp;
  version_saved: number;
  response_type: string | null;
  budget: string;
  itemised_sheet_version: number;
  itemised_sheet_is_draft: boolean;
  itemised_sheet_has_additional_services: boolean;
  end_of_offer_date: PgTimestamp;
  consultation_started_at: PgTimestamp;
  fold_opened: boolean;
  favourite_consultation_id: string | null;
  selected_consultation_id: string | null;
  created_at: PgTimestamp;
  updated_at: PgTimestamp;
  trade_id: string;
  trade_name: string;
  trade_number: string;
  trade_short_name: string;
}

/** Templates `t` with their trades `pt` (the FROM below). */
const TEMPLATE_COLUMNS = `t.id, t.project_id, t.is_slice, t.slice_name, t.closed_at, t.version_saved, t.response_type, t.budget,
  t.itemised_sheet_version, t.itemised_sheet_is_draft, t.itemised_sheet_has_additional_services, t.end_of_offer_date,
  t.consultation_started_at, t.fold_opened, t.favourite_consultation_id, t.selected_consultation_id, t.created_at, t.updated_at,
  pt.id as trade_id, pt.name as trade_name, pt.number as trade_number, pt.short_name as trade_short_name`;
const TEMPLATES_FROM = 'template t join project_trade pt on pt.id = t.trade_id';

/** A template's own fields from its row (reads: no entity, nothing for the unit of work to track). */
function templateFromRow(em: EntityManager, r: TemplateRow): TemplateFields {
  return {
    id: r.id,
    projectId: r.project_id,
    isSlice: r.is_slice,
    slice: r.is_slice ? r.slice_name : null,
    closedAt: rowTime(r.closed_at),
    versionSaved: r.version_saved,
    responseType: r.response_type,
    budgets: { value: amountOf(r.budget) },
    itemisedSheet: { version: r.itemised_sheet_version, isDraft: r.itemised_sheet_is_draft, hasAdditionalServices: r.itemised_sheet_has_additional_services },
    trade: { id: r.trade_id, name: r.trade_name, number: r.trade_number, shortName: r.trade_short_name },
    endOfOfferDate: rowTime(r.end_of_offer_date),
    consultationStartedAt: rowTime(r.consultation_started_at),
    foldOpened: r.fold_opened,
    favouriteConsultationId: r.favourite_consultation_id,
    selectedConsultationId: r.selected_consultation_id,
    createdAt: rowTime(r.created_at!),
    updatedAt: rowTime(r.updated_at!),
  };
}

/**
 * DPGF templates and their slices: list, read with documents, add (a trade's template, then slices of
 * it), delete (never losing an answer).
 */
export class TemplateService {
  constructor(private readonly sc: ServiceContext) {}

  /**
   * Templates and slices of many projects in one statement, by (lowercase) project id, oldest first; a
   * project the caller may not see gets an empty list.
   */
  async templatesByProject(projectIds: readonly string[]): Promise<Map<string, TemplateFields[]>> {
    const ids = uuidList(projectIds);
    const orgs = uuidList(this.sc.caller.adminOrganizationIds);
    const rows = ids.length && orgs.length
      ? await this.sc.em.execute<TemplateRow[]>(`select ${TEMPLATE_COLUMNS} from ${TEMPLATES_FROM} join project p on p.id = t.project_id
        where t.project_id = any(${uuidArraySql(ids)}) and ${ownedBy('p.organization_id', orgs)}
        order by t.created_at, t.id`)
      : [];
    return groupUnder(ids, rows, (r) => r.project_id, (r) => templateFromRow(this.sc.em, r));
  }

  /** Template records with their stats: one statement for the stats whatever their number. */
  async views(templates: TemplateFields[]): Promise<TemplateView[]> {
    const stats = await new StatisticsService(this.sc).templateStats(templates.map((t) => t.id));
    return templates.map(({ createdAt, updatedAt, ...fields }) => ({ ...fields, stats: stats.get(fields.id) ?? EMPTY_STATS, createdAt, updatedAt }));
  }

  /** #10: templates and slices of a project, oldest first; paged when `first` is given. */
  async list(projectId: string, opts: TemplateListOptions = {}): Promise<Page<TemplateFields>> {
    const project = await visibleProject(this.sc, projectId);
    return keysetPage(this.sc.em, {
      columns: TEMPLATE_COLUMNS,
      from: TEMPLATES_FROM,
      alias: 't',
      where: 't.project_id = ?',
      params: [project.id],
      map: (r: TemplateRow) => templateFromRow(this.sc.em, r),
    }, { first: opts.first, after: opts.after, order: 'asc', count: true });
  }

  /** A template or slice of a visible project, with its trade; 404 otherwise. */
  async get(projectId: string, templateId: string): Promise<TemplateFields> {
    const orgs = uuidList(this.sc.caller.adminOrganizationIds);
    const [row] = orgs.length && isUuid(templateId) && isUuid(projectId)
      ? await this.sc.em.execute<TemplateRow[]>(`select ${TEMPLATE_COLUMNS} from ${TEMPLATES_FROM} join project p on p.id = t.project_id
        where t.id = ? and p.id = ? and ${ownedBy('p.organization_id', orgs)}`, [templateId.toLowerCase(), projectId.toLowerCase()])
      : [];
    if (!row) throw new NotFoundError('Template not found');
    return templateFromRow(this.sc.em, row);
  }

  /** #13: the template's name and its documents with contractors and versions. */
  async detail(projectId: string, templateId: string): Promise<TemplateDetailView> {
    const template = await this.get(projectId, templateId);
    const [item] = await this.withDocuments([template]);
    return { id: item.id, name: item.name, documents: item.documents };
  }

  /** Templates with their documents: three statements whatever their number. */
  async withDocuments(templates: TemplateFields[]): Promise<TemplateDocumentsView[]> {
    const documents = new DocumentService(this.sc);
    const byTemplate = await documents.documentsByTemplate(templates.map((t) => t.id));
    const views = new Map((await documents.views([...byTemplate.values()].flat())).map((d) => [d.id, d]));
    return templates.map((t) => {
      const { id, isSlice, slice, trade } = t;
      return { id, name: templateName(t), isSlice, slice, trade, documents: (byTemplate.get(t.id) ?? []).map((d) => views.get(d.id)!) };
    });
  }

  /**
   * #11: the trade's template when it has none, else a slice of it, named `sliceName` or "Tranche N".
   * Creations for one trade are serialized by a lock on the trade, so two at once cannot both make the
   * main template, nor pick the same "Tranche N".
   */
  async create(projectId: string, input: AddTemplateInput): Promise<Template> {
    const project = await writableProject(this.sc, projectId);
    try {
      return await this.sc.em.transactional(async (em) => {
        await holdWritable(em, project.id);
        const trade = await em.findOne(ProjectTrade, { id: input.tradeId.toLowerCase(), project: project.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!trade) throw new ValidationError([{ field: 'tradeId', message: 'is not a trade of this project' }]);
        const existing = await em.find(Template, { trade: trade.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
        const main = existing.find((t) => !t.parent) ?? null;
        const template = em.create(Template, {
          project: project.id,
          trade,
          parent: main,
          isSlice: main !== null,
          sliceName: main ? input.sliceName ?? nextTrancheName(existing.filter((t) => t.parent).map((t) => t.sliceName ?? '')) : null,
          budget: input.budget ?? 0,
          responseType: project.responseType,
          // A date without a time: noon UTC keeps it on the same day in every European time zone.
          endOfOfferDate: project.endOfOfferDate ? new Date(`${project.endOfOfferDate}T12:00:00Z`) : null,
        });
        await em.flush();
        return template;
      });
    } catch (err) {
      // The trade lock makes this unreachable between requests of this service; the index stays the guarantee.
      if (err instanceof UniqueConstraintViolationException) throw new ConflictError('Another template was added to this trade at the same time: try again');
      throw err;
    }
  }

  /**
   * #14: a slice removes itself; a main template removes itself with its slices (and their documents).
   * 409 when any of them holds an ANSWERED version: answers are never lost. Answers what went, and the
   * main template whose slices changed when a slice went.
   */
  async remove(projectId: string, templateId: string): Promise<RemovedTemplates> {
    const project = await writableProject(this.sc, projectId);
    const id = templateId.toLowerCase();
    return this.sc.em.transactional(async (em) => {
      await holdWritable(em, project.id);
      const [found] = await em.execute<Array<{ trade_id: string }>>('select trade_id from template where id = ? and project_id = ?', [id, project.id]);
      if (!found) throw new NotFoundError('Template not found');
      // Same lock order as create() (trade, then template): a slice cannot be added under a template being removed.
      await em.execute('select id from project_trade where id = ? for update', [found.trade_id]);
      const [locked] = await em.execute<Array<{ id: string }>>('select id from template where id = ? and project_id = ? for update', [id, project.id]);
      if (!locked) throw new NotFoundError('Template not found');
      if (await hasAnswers(em, id)) {
        throw new ConflictError('The template or one of its slices holds answered offers: it cannot be deleted');
      }
      // The slices would go by the foreign key's cascade; named here so that their ids are answered.
      const removed = await em.execute<Array<{ id: string; parent_id: string | null }>>(
        'delete from template where id = ? or parent_id = ? returning id, parent_id', [id, id]);
      return {
        projectId: project.id,
        templateIds: [id, ...removed.filter((r) => r.id !== id).map((r) => r.id)],
        parentTemplateId: removed.find((r) => r.id === id)?.parent_id ?? null,
      };
    });
  }
}

/** Whether the template, or one of its slices, has a document with an ANSWERED version. */
async function hasAnswers(em: EntityManager, templateId: string): Promise<boolean> {
  const [row] = await em.execute<Array<{ answered: boolean }>>(`
    select exists (
      select 1 from document_version v
      join document d on d.id = v.document_id
      join template t on t.id = d.template_id
      where (t.id = ? or t.parent_id = ?) and v.status = 'ANSWERED'
    ) as answered`, [templateId, templateId]);
  return row.answered;
}

/** "Tranche N", N = number of slices + 1, or the next number whose name is free when slices were removed. */
function nextTrancheName(sliceNames: string[]): string {
  const taken = new Set(sliceNames);
  let n = sliceNames.length + 1;
  while (taken.has(`Tranche ${n}`)) n++;
  return `Tranche ${n}`;
}
