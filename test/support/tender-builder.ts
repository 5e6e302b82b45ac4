import type { EntityManager } from '@mikro-orm/postgresql';
import { Contractor, Document, DocumentVersion, ProjectTrade, Template, VersionStatus, type Intention } from '../../src/modules/entities';
import { DEMO_IDS } from '../../src/seed/demo-data';
import type { TestApp } from './app';
import { queryRows } from './databases';
import { request } from './http';

/**
 * Small tendering projects of Atelier Demo written for a test: the project through the REST interface, then
 * templates, slices, documents and versions through the ORM (contractors' answers have no operation here).
 * Documents are invited one minute apart, in the order written; versions are sent one hour apart.
 */

interface VersionSpec { status: VersionStatus; subTotal: number; discount?: number }
interface DocumentSpec {
  key: string;
  /** Name of a contractor of Atelier Demo's directory, created on first use (email from the name). */
  contractor: string;
  intention?: Intention | null;
  /** The tender documents were downloaded (`dce_downloaded_at` set). */
  dce?: boolean;
  versions?: VersionSpec[];
}
interface TemplateSpec {
  key: string;
  budget: number;
  /** Key of the selected document. */
  selected?: string;
  documents?: DocumentSpec[];
}
export interface MainTemplateSpec extends TemplateSpec {
  /** Trade number in the project (copied from the standard trade list). */
  trade: string;
  slices?: TemplateSpec[];
}

const INVITED_AT = Date.parse('2026-09-01T08:00:00Z');
export const SENT_AT = Date.parse('2026-10-01T08:00:00Z');

/** A project of Atelier Demo created through the API (standard trade list, EUR); its id. */
export async function createProject(t: TestApp, token: string, name: string): Promise<string> {
  const res = await request(t.url, 'POST', '/api/svc/v1/projects', {
    token,
    body: {
      name, construction_type: 'office', managers: [{ id: DEMO_IDS.users.architect }],
      trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF', scopes: { currency: 'EUR', vat: 20 },
    },
  });
  if (res.status !== 201) throw new Error(`project not created: ${res.status} ${res.text}`);
  return res.body.project.id;
}

const emailOf = (name: string) => `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}@builder.example.test`;

/** The contractor of Atelier Demo's directory with this name, created on first use. */
export async function contractorOf(em: EntityManager, name: string): Promise<Contractor> {
  const email = emailOf(name);
  return await em.findOne(Contractor, { organization: DEMO_IDS.organizations.atelierDemo, email })
    ?? em.create(Contractor, { organization: DEMO_IDS.organizations.atelierDemo, name, email });
}

/**
 * Writes templates, slices, documents and versions into a project; answers their ids by key. Slices are
 * stored after their main template (the one-main-template-per-trade index sees parent_id at insert).
 */
export async function fillProject(t: TestApp, projectId: string, templates: MainTemplateSpec[]): Promise<Record<string, string>> {
  const em = t.orm.em.fork();
  const ids: Record<string, string> = {};
  const trades = await em.find(ProjectTrade, { project: projectId });
  const documents: Array<[Template, DocumentSpec]> = [];
  const selections: Array<[Template, string]> = [];
  let created = Date.parse('2026-08-01T08:00:00Z');
  const template = (spec: TemplateSpec, trade: ProjectTrade, parent: Template | null) => {
    const tpl = em.create(Template, {
      project: projectId, trade, parent, isSlice: parent !== null, sliceName: parent ? spec.key : null, budget: spec.budget,
      createdAt: new Date((created += 60_000)),
    });
    ids[spec.key] = tpl.id;
    for (const d of spec.documents ?? []) documents.push([tpl, d]);
    if (spec.selected) selections.push([tpl, spec.selected]);
    return tpl;
  };
  const mains = templates.map((spec) => {
    const trade = trades.find((tr) => tr.number === spec.trade);
    if (!trade) throw new Error(`no trade ${spec.trade}`);
    return { spec, trade, tpl: template(spec, trade, null) };
  });
  await em.flush();
  for (const m of mains) for (const s of m.spec.slices ?? []) template(s, m.trade, m.tpl);
  await em.flush();
  const byKey = new Map<string, Document>();
  let invited = INVITED_AT;
  for (const [tpl, d] of documents) {
    const doc = em.create(Document, {
      template: tpl, contractor: await contractorOf(em, d.contractor), intention: d.intention ?? null, createdAt: new Date((invited += 60_000)),
      dceDownloadedAt: d.dce ? new Date(INVITED_AT) : null,
    });
    byKey.set(d.key, doc);
    ids[d.key] = doc.id;
    (d.versions ?? []).forEach((v, i) => em.create(DocumentVersion, {
      document: doc, version: i + 1, status: v.status, subTotal: v.subTotal, discount: v.discount ?? 0,
      sentAt: v.status === VersionStatus.DRAFT ? null : new Date(SENT_AT + i * 3_600_000),
    }));
  }
  await em.flush();
  for (const [tpl, key] of selections) tpl.selectedConsultation = byKey.get(key)!;
  await em.flush();
  return ids;
}

/**
 * What the contractor portal does, as another client of the database: a new ANSWERED version of the project's first
 * document (by id), in plain SQL through `databaseUrl`. Resolves to that document's id.
 */
export async function answerFirstDocumentWithSql(databaseUrl: string, projectId: string, subTotal: number): Promise<string> {
  const [row] = await queryRows<{ document_id: string }>(databaseUrl, `insert into document_version
    (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
    select gen_random_uuid(), now(), now(), d.id, coalesce((select max(version) from document_version v where v.document_id = d.id), 0) + 1,
      'ANSWERED', $2, 0, false, true, now()
    from document d join template t on t.id = d.template_id where t.project_id = $1 order by d.id limit 1
    returning document_id`, [projectId, subTotal]);
  return row.document_id;
}
