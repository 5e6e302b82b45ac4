import type { Time } from '../../platform/values/time';
import { NotFoundError } from '../../platform/errors/errors';
import { ownedBy } from '../../platform/database/tenancy';
import { contractorsAmong, contractorsByIds, type ContractorDetailView } from '../contractors/contractor.service';
import { rowTime, type PgTimestamp } from '../../platform/database/rows';
import { signedFileUrl } from './file-url';
import type { ServiceContext } from '../../platform/service-context';
import { amountOf } from '../../platform/money/money';
import { uuidArraySql, uuidList } from '../../platform/database/uuid';
import { groupBy, groupUnder } from '../../platform/database/batch';
import { PROJECT_DOCUMENTS_FROM } from './document.sql';

/** A document's state: the status of its latest version, PENDING when it has none or a draft (decisions.md section 4). */
type DocumentState = 'PENDING' | 'ANSWERED' | 'IN_REVISION' | 'DECLINED';

/** A document's own fields; its contractor and versions come from contractorsByIds and versionsByDocument. */
export interface DocumentFields {
  id: string;
  templateId: string;
  contractorId: string;
  intention: string | null;
  state: DocumentState;
  dceDownloadedAt: Time | null;
}

interface DocumentVersionView {
  version: number;
  subTotal: number;
  discount: number;
  status: string;
  /** Null for a draft. */
  sentAt: Time | null;
  isMandate: boolean;
  hasFiles: boolean;
  hasDpgf: boolean;
}

/** A version with the id of its row (GraphQL keys it by that id; REST bodies do not show it). */
export interface VersionFields extends DocumentVersionView {
  id: string;
}

/**
 * The columns of a version's fields. A loader reads only those of the fields the operation selects: each column
 * costs decoding on every row (a timestamp, parsing too), and a dashboard reads thousands of versions.
 */
const VERSION_COLUMNS = {
  id: 'v.id',
  subTotal: 'v.sub_total',
  discount: 'v.discount',
  status: 'v.status',
  sentAt: 'v.sent_at',
  isMandate: 'v.is_mandate',
  hasDpgf: 'v.has_dpgf',
  hasFiles: 'exists (select 1 from document_file f where f.version_id = v.id) as has_files',
} as const;
export type VersionField = keyof typeof VERSION_COLUMNS;
export const VERSION_FIELDS = Object.keys(VERSION_COLUMNS) as VersionField[];

/** What a loader reads of a version: its number, and the fields the operation selects (the others are absent). */
export type PartialVersionFields = Pick<VersionFields, 'version'> & Partial<VersionFields>;

/** A document's fields read only when asked for: `state` reads the versions, the others cost decoding on every row. */
export interface DocumentFieldSelection {
  state: boolean;
  intention: boolean;
  dceDownloadedAt: boolean;
}
const ALL_DOCUMENT_FIELDS: DocumentFieldSelection = { state: true, intention: true, dceDownloadedAt: true };

/** What a loader reads of a document: its keys, and the fields of DocumentFieldSelection that were asked for. */
export type PartialDocumentFields = Omit<DocumentFields, keyof DocumentFieldSelection> & Partial<Pick<DocumentFields, keyof DocumentFieldSelection>>;

/** A document as "Template detail" shows it, plus its `state`. */
export interface DocumentView {
  id: string;
  contractor: { id: string; name: string; information: { fiscalNumber: string | null }; email: string };
  dceDownloadedAt: Time | null;
  intention: string | null;
  state: DocumentState;
  versions: DocumentVersionView[];
}

export interface VersionFilesView {
  version: number;
  status: string;
  sentAt: Time | null;
  files: { name: string; size: number }[];
}

export interface FileDownloadView {
  name: string;
  url: string;
  expiresAt: Date;
}

interface DocumentRow {
  id: string;
  template_id: string;
  contractor_id: string;
  intention: string | null;
  state?: DocumentState;
  dce_downloaded_at: PgTimestamp;
}

interface VersionRow {
  id: string;
  document_id: string;
  version: number;
  sub_total: string;
  discount: string;
  status: string;
  sent_at: PgTimestamp;
  is_mandate: boolean;
  has_files?: boolean;
  has_dpgf: boolean;
}

/** The highest version number a version column (integer) holds. */
const MAX_VERSION = 2147483647;

/** Documents with their template `t` and project `p`, for a condition on the document (its id, its template). */
const DOCUMENTS_FROM = `document d
    join template t on t.id = d.template_id
    join project p on p.id = t.project_id`;

/**
 * Documents of the caller's organizations, with the fields asked for, in creation order. `where` is an extra SQL
 * condition on `d` (or its template `t`) with its bindings. `state` reads the latest version: only when asked.
 */
const DOCUMENTS_SQL = (organizationIds: readonly string[], where: string, asked: DocumentFieldSelection, from = DOCUMENTS_FROM) => `
    select d.id, d.template_id, d.contractor_id${asked.intention ? ', d.intention' : ''}${asked.dceDownloadedAt ? ', d.dce_downloaded_at' : ''}${asked.state
    ? `, case when l.status is null or l.status = 'DRAFT' then 'PENDING' else l.status end as state` : ''}
    from ${from}${asked.state ? `
    left join lateral (
      select v.status from document_version v where v.document_id = d.id order by v.version desc limit 1
    ) l on true` : ''}
    where ${ownedBy('p.organization_id', organizationIds)} and ${where}
    order by d.created_at, d.id`;

/** Invited contractors' documents on templates: their versions, contractors, files and download URLs. */
export class DocumentService {
  constructor(private readonly sc: ServiceContext) {}

  /**
   * Documents of many templates in one statement, by template id (every requested id present); every field
   * unless `asked` leaves some out.
   */
  async documentsByTemplate(templateIds: readonly string[]): Promise<Map<string, DocumentFields[]>>;
  async documentsByTemplate(templateIds: readonly string[], asked: DocumentFieldSelection): Promise<Map<string, PartialDocumentFields[]>>;
  async documentsByTemplate(templateIds: readonly string[], asked = ALL_DOCUMENT_FIELDS): Promise<Map<string, PartialDocumentFields[]>> {
    const ids = uuidList(templateIds);
    const rows = ids.length ? await this.query(`d.template_id = any(${uuidArraySql(ids)})`, [], asked) : [];
    return groupUnder(ids, rows, (d) => d.templateId, (d) => d);
  }

  /**
   * Documents of every template of many projects in one statement, by template id (a template without documents
   * is absent): a template level's documents read at the same time as the templates themselves.
   */
  async documentsByProject(projectIds: readonly string[], asked: DocumentFieldSelection): Promise<Map<string, PartialDocumentFields[]>> {
    const ids = uuidList(projectIds);
    const rows = ids.length ? await this.query(`t.project_id = any(${uuidArraySql(ids)})`, [], asked, PROJECT_DOCUMENTS_FROM) : [];
    return groupBy(rows, (d) => d.templateId);
  }

  /** Documents of one template for some contractors, in one statement. */
  async documentsOfContractors(templateId: string, contractorIds: readonly string[]): Promise<DocumentFields[]> {
    const ids = uuidList(contractorIds);
    if (!ids.length) return [];
    return this.query(`d.template_id = ? and d.contractor_id = any(${uuidArraySql(ids)})`, [templateId.toLowerCase()], ALL_DOCUMENT_FIELDS) as Promise<DocumentFields[]>;
  }

  /** Versions of many documents in one statement, by document id, ordered by version; every field unless `fields` says which. */
  async versionsByDocument(documentIds: readonly string[]): Promise<Map<string, VersionFields[]>>;
  async versionsByDocument(documentIds: readonly string[], fields: readonly VersionField[]): Promise<Map<string, PartialVersionFields[]>>;
  async versionsByDocument(documentIds: readonly string[], fields: readonly VersionField[] = VERSION_FIELDS): Promise<Map<string, PartialVersionFields[]>> {
    const ids = uuidList(documentIds);
    if (!ids.length) return new Map();
    // Documents reach here only through the caller's templates; versions carry no tenancy of their own.
    const rows = await this.versionRows(`
      from document_version v
      where v.document_id = any(${uuidArraySql(ids)})`, [], fields);
    return groupUnder(ids, rows, (r) => r.document_id, this.versionFromRow(fields));
  }

  /**
   * Versions of the documents of every template of many projects of the caller's organizations, in one statement,
   * by document id (a document without versions is absent): read at the same time as the templates and documents.
   */
  async versionsByProject(projectIds: readonly string[], fields: readonly VersionField[]): Promise<Map<string, PartialVersionFields[]>> {
    const ids = uuidList(projectIds);
    const orgs = uuidList(this.sc.caller.adminOrganizationIds);
    if (!ids.length || !orgs.length) return new Map();
    // Through the versions' own template column (Migration20270120000000_version_template): one index probe per
    // template, not one per document, and no document row read at all.
    const rows = await this.versionRows(`
      from template t
      join project p on p.id = t.project_id
      join document_version v on v.template_id = t.id
      where t.project_id = any(${uuidArraySql(ids)}) and ${ownedBy('p.organization_id', orgs)}`, [], fields);
    return groupBy(rows, (r) => r.document_id, this.versionFromRow(fields));
  }

  /** Directory entries of the caller's organizations invited on the templates of many projects, in one statement. */
  async contractorsByProject(projectIds: readonly string[]): Promise<Map<string, ContractorDetailView>> {
    const ids = uuidList(projectIds);
    const orgs = uuidList(this.sc.caller.adminOrganizationIds);
    if (!ids.length) return new Map();
    const named = `
      select d.contractor_id from ${PROJECT_DOCUMENTS_FROM}
      where t.project_id = any(${uuidArraySql(ids)}) and ${ownedBy('p.organization_id', orgs)}`;
    return new Map((await contractorsAmong(this.sc.em, named, orgs)).map((c) => [c.id, c]));
  }

  /** Directory entries of the caller's organizations by id, in one statement. */
  async contractorsByIds(contractorIds: readonly string[]): Promise<Map<string, ContractorDetailView>> {
    const ids = uuidList(contractorIds);
    const orgs = uuidList(this.sc.caller.adminOrganizationIds);
    return new Map((await contractorsByIds(this.sc.em, ids, orgs)).map((c) => [c.id, c]));
  }

  /** Documents with their contractor and versions: two statements whatever their number. */
  async views(documents: DocumentFields[]): Promise<DocumentView[]> {
    const contractors = await this.contractorsByIds(documents.map((d) => d.contractorId));
    const versions = await this.versionsByDocument(documents.map((d) => d.id));
    return documents.map((d) => {
      const c = contractors.get(d.contractorId);
      if (!c) throw new Error(`contractor ${d.contractorId} of document ${d.id} is not in the document's organization`);
      return {
        id: d.id,
        contractor: { id: c.id, name: c.name, information: c.information, email: c.email },
        dceDownloadedAt: d.dceDownloadedAt,
        intention: d.intention,
        state: d.state,
        versions: (versions.get(d.id) ?? []).map(({ id: _id, ...version }) => version),
      };
    });
  }

  /** #16 without a version: every version of the document with its files' names and sizes. */
  async versionFiles(projectId: string, templateId: string, documentId: string): Promise<VersionFilesView[]> {
    const id = await this.visibleDocument(projectId, templateId, documentId);
    const rows = await this.sc.em.execute<Array<{ version: number; status: string; sent_at: PgTimestamp; name: string | null; size: number | null }>>(`
      select v.version, v.status, v.sent_at, f.name, f.size
      from document_version v left join document_file f on f.version_id = v.id
      where v.document_id = ?
      order by v.version, f.created_at, f.name, f.id`, [id]);
    const out: VersionFilesView[] = [];
    for (const r of rows) {
      let v = out[out.length - 1];
      if (!v || v.version !== r.version) out.push(v = { version: r.version, status: r.status, sentAt: rowTime(r.sent_at), files: [] });
      if (r.name !== null) v.files.push({ name: r.name, size: r.size ?? 0 });
    }
    return out;
  }

  /** #16 with a version: a signed, expiring URL for each file of that version; 404 when there is no such version. */
  async versionDownload(projectId: string, templateId: string, documentId: string, version: string): Promise<FileDownloadView[]> {
    const id = await this.visibleDocument(projectId, templateId, documentId);
    const n = Number(version);
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_VERSION) throw new NotFoundError('Version not found');
    const rows = await this.sc.em.execute<Array<{ file_id: string | null; name: string | null }>>(`
      select f.id as file_id, f.name
      from document_version v left join document_file f on f.version_id = v.id
      where v.document_id = ? and v.version = ?
      order by f.created_at, f.name, f.id`, [id, n]);
    if (!rows.length) throw new NotFoundError('Version not found');
    return rows.filter((r) => r.file_id !== null).map((r) => {
      const signed = signedFileUrl(this.sc.config, r.file_id!);
      return { name: r.name!, url: signed.url, expiresAt: signed.expiresAt };
    });
  }

  /** The document's id when it is on that template of that project of the caller's organizations; 404 otherwise. */
  private async visibleDocument(projectId: string, templateId: string, documentId: string): Promise<string> {
    const [row] = await this.sc.em.execute<Array<{ id: string }>>(`
      select d.id from document d
      join template t on t.id = d.template_id
      join project p on p.id = t.project_id
      where d.id = ? and t.id = ? and p.id = ? and ${ownedBy('p.organization_id', uuidList(this.sc.caller.adminOrganizationIds))}`,
    [documentId.toLowerCase(), templateId.toLowerCase(), projectId.toLowerCase()]);
    if (!row) throw new NotFoundError('Document not found');
    return row.id;
  }

  /** Version rows `from` a clause naming the versions `v`, with the selected columns, by document and version. */
  private versionRows(from: string, params: unknown[], fields: readonly VersionField[]): Promise<VersionRow[]> {
    const asked = new Set(fields);
    const columns = VERSION_FIELDS.filter((f) => asked.has(f)).map((f) => `, ${VERSION_COLUMNS[f]}`).join('');
    return this.sc.em.execute<VersionRow[]>(`select v.document_id, v.version ${columns} ${from} order by v.document_id, v.version`, params);
  }

  private versionFromRow(fields: readonly VersionField[]): (r: VersionRow) => PartialVersionFields {
    // Decided once per statement, not per row: a dashboard maps thousands of versions.
    const asked = new Set(fields);
    const [id, subTotal, discount, status, sentAt, isMandate, hasDpgf, hasFiles] = (['id', 'subTotal', 'discount', 'status', 'sentAt', 'isMandate', 'hasDpgf', 'hasFiles'] as const).map((f) => asked.has(f));
    return (r) => {
      const v: PartialVersionFields = { version: r.version };
      if (id) v.id = r.id;
      if (subTotal) v.subTotal = amountOf(r.sub_total);
      if (discount) v.discount = amountOf(r.discount);
      if (status) v.status = r.status;
      if (sentAt) v.sentAt = rowTime(r.sent_at);
      if (isMandate) v.isMandate = r.is_mandate;
      if (hasDpgf) v.hasDpgf = r.has_dpgf;
      if (hasFiles) v.hasFiles = r.has_files;
      return v;
    };
  }

  private async query(where: string, params: unknown[], asked: DocumentFieldSelection, from?: string): Promise<PartialDocumentFields[]> {
    const orgs = uuidList(this.sc.caller.adminOrganizationIds);
    if (!orgs.length) return [];
    const rows = await this.sc.em.execute<DocumentRow[]>(DOCUMENTS_SQL(orgs, where, asked, from), params);
    return rows.map((r) => {
      const d: PartialDocumentFields = { id: r.id, templateId: r.template_id, contractorId: r.contractor_id };
      if (asked.intention) d.intention = r.intention;
      if (asked.state) d.state = r.state;
      if (asked.dceDownloadedAt) d.dceDownloadedAt = rowTime(r.dce_downloaded_at);
      return d;
    });
  }
}
