import { uuidArraySql } from '../../platform/database/uuid';
import { ownedBy } from '../../platform/database/tenancy';

// The leveling's statements and the rows they answer (leveling.service.ts runs them).

/** What the leveling reads: projects by id and by one of their templates, within the caller's organizations. */
export interface Asked {
  projectIds: readonly string[];
  templateIds: readonly string[];
  organizationIds: readonly string[];
}

/** The projects `projectIds` and the projects of the templates `templateIds`, each limited to the organizations. */
const projectsSql = ({ projectIds, templateIds, organizationIds }: Asked) => `
    select p.id as project_id, p.name as project_name, p.scopes ->> 'currency' as currency, p.archived_at is not null as archived
    from project p where p.id = any(${uuidArraySql(projectIds)}) and ${ownedBy('p.organization_id', organizationIds)}
    union
    select p.id, p.name, p.scopes ->> 'currency', p.archived_at is not null
    from template t join project p on p.id = t.project_id
    where t.id = any(${uuidArraySql(templateIds)}) and ${ownedBy('p.organization_id', organizationIds)}`;

/**
 * The lots (templates and slices) of the projects and the templates asked for, in each project's order (trade
 * number, each template before its slices); a project without lots gives one row without a lot.
 */
export const lotsSql = (asked: Asked) => `
  with p as (${projectsSql(asked)})
  select p.*, t.id as template_id, t.budget, t.is_slice, t.slice_name, t.selected_consultation_id,
    tr.id as trade_id, tr.number as trade_number, tr.name as trade_name
  from p
  left join template t on t.project_id = p.project_id
    and (t.project_id = any(${uuidArraySql(asked.projectIds)}) or t.id = any(${uuidArraySql(asked.templateIds)}))
  left join project_trade tr on tr.id = t.trade_id
  order by p.project_id, tr.number, tr.created_at, tr.id, t.is_slice, t.created_at, t.id`;

/**
 * The documents of the same lots, each lot's in the leveling's order: offers from the lowest (ties by
 * contractor name, then invitation), then the documents without one, by invitation (docs/leveling.md). The state and offer are the rows the
 * statistics triggers keep (Migration20261220000000_statistics and Migration20261231000000_statistics_offer_version).
 */
export const documentsSql = ({ projectIds, templateIds, organizationIds }: Asked) => `
  select ds.template_id, ds.document_id, ds.contractor_id, c.name as contractor_name, ds.state, ds.intention,
    ds.offer_sub_total as sub_total, ds.offer_discount as discount, ds.offer_version as version,
    ds.offer_sent_at as sent_at
  from document_statistics ds
  join contractor c on c.id = ds.contractor_id
  join document d on d.id = ds.document_id
  where ds.template_id in (
    select t.id from template t join project p on p.id = t.project_id
    where (t.project_id = any(${uuidArraySql(projectIds)}) or t.id = any(${uuidArraySql(templateIds)}))
      and ${ownedBy('p.organization_id', organizationIds)})
  order by ds.template_id, ds.offer_sub_total - ds.offer_discount nulls last,
    case when ds.offer_sub_total is not null then c.name end, d.created_at, ds.document_id`;

/** pg answers numeric and bigint as strings. */
type Num = string | null;

export interface LotRow {
  project_id: string;
  project_name: string;
  currency: string | null;
  archived: boolean;
  template_id: string | null;
  trade_id: string;
  trade_number: string;
  trade_name: string;
  is_slice: boolean;
  slice_name: string | null;
  selected_consultation_id: string | null;
  budget: string;
}

export interface OfferRow {
  template_id: string;
  document_id: string;
  contractor_id: string;
  contractor_name: string;
  state: string;
  intention: string | null;
  sub_total: Num;
  discount: Num;
  version: number | null;
  /** PostgreSQL's text, to the microsecond. */
  sent_at: string | null;
}
