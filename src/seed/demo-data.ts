/**
 * Loads the demo data (decisions.md section 3): the records of demo-records.ts, under the ids of demo-ids.ts
 * (re-exported here for the tests and scripts that load and name them together).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  Contractor, CreditLedgerEntry, Document, DocumentFile, DocumentVersion, Headquarter, Membership, Organization,
  OrganizationKind, PartnerRole, Project, ProjectTrade, Template, TradeCategory, TradeCategoryMapping, TradeList, TradeListTrade,
  TradeMappingSource, User, UserPartnerRole, VersionStatus,
} from '../modules/entities';
import { hashPassword } from '../modules/identity/password';
import { normalizeKey } from '../platform/values/text';
import { DEMO_IDS, DEMO_PASSWORD, DEMO_USERS, demoLegacyId, demoUuid, type Kind } from './demo-ids';
import {
  CONTRACTORS, ORG, ORGANIZATIONS, PARTNER_ROLES, PARTNER_TRADE_CATEGORIES, PROJECTS, TRADE_CATEGORIES, TRADE_LISTS, USERS,
  USER_PARTNER_ROLES, USR, demoCreditDate, type DocumentSpec, type ProjectSpec, type TemplateSpec,
} from './demo-records';

export * from './demo-ids';

// ---------------------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------------------

/** Credits consumed by Atelier Nord besides its documents' invitations (one per month, current first). */
const NORD_EXTRA_CREDITS = 4;

/** Serializes concurrent loads (two processes starting at once): a transaction-scoped advisory lock. */
const SEED_LOCK_KEY = 727274001;

/** Creates the records, keeping the created entities by id so relations point at the same instances. */
class DemoLoader {
  private readonly organizations = new Map<string, Organization>();
  private readonly users = new Map<string, User>();
  private readonly tradeLists = new Map<string, TradeList>();
  private readonly tradeListTrades = new Map<string, TradeListTrade>();
  private readonly contractors = new Map<string, Contractor>();
  private readonly counters = new Map<Kind, number>();
  private readonly pendingSlices: Array<() => void> = [];
  /** Documents in creation order, for the credits ledger. */
  readonly documents: Document[] = [];
  /** Templates whose selected or favourite consultation is set once the documents exist. */
  readonly choices: Array<{ template: string; selected: string | null; favourite: string | null }> = [];

  /** `passwordHashes`: one hash (own salt) per demo login, by user id. */
  constructor(private readonly em: EntityManager, private readonly passwordHashes: Map<string, string>) {}

  /** The next sequential demo UUID of a kind whose records are not named in DEMO_IDS. */
  private nextId(kind: Kind): string {
    const n = (this.counters.get(kind) ?? 0) + 1;
    this.counters.set(kind, n);
    return demoUuid(kind, n);
  }

  private static get<T>(map: Map<string, T>, id: string): T {
    const entity = map.get(id);
    if (!entity) throw new Error(`demo data: ${id} is referenced before it is created`);
    return entity;
  }

  organizationsAndUsers(): void {
    const headquarter = this.em.create(Headquarter, {
      id: DEMO_IDS.headquarter, legacyId: demoLegacyId(DEMO_IDS.headquarter), name: 'Groupe Demo',
      ...stamp('2026-01-05T08:30:00Z'),
    });
    for (const o of ORGANIZATIONS) {
      this.organizations.set(o.id, this.em.create(Organization, {
        id: o.id, legacyId: demoLegacyId(o.id), name: o.name, kind: o.kind, fiscalNumber: o.fiscalNumber,
        addresses: [o.address], businessSectors: o.businessSectors,
        apiEnabled: o.kind === OrganizationKind.ARCHITECT, headquarter: o.inHeadquarter ? headquarter : null,
        ...stamp(o.createdAt),
      }));
    }
    for (const u of USERS) {
      const user = this.em.create(User, {
        id: u.id, legacyId: demoLegacyId(u.id), email: u.email, firstName: u.firstName, lastName: u.lastName,
        phone: u.phone, mobile: u.mobile, passwordHash: this.passwordHashes.get(u.id) ?? null,
        isRegistered: u.isRegistered, apiAccessGranted: u.demoLogin, apiEnabled: u.apiEnabled,
        currentOrganization: DemoLoader.get(this.organizations, u.currentOrganization), ...stamp(u.createdAt),
      });
      this.users.set(u.id, user);
      for (const [organization, role] of u.memberships) {
        this.em.create(Membership, {
          id: this.nextId('membership'), user, organization: DemoLoader.get(this.organizations, organization), role,
          ...stamp(u.createdAt),
        });
      }
    }
    headquarter.admins.add(DemoLoader.get(this.users, USR.architect));
  }

  partnerRoles(): void {
    const roles = new Map<string, PartnerRole>();
    for (const r of PARTNER_ROLES) {
      roles.set(r.id, this.em.create(PartnerRole, {
        id: r.id, code: r.code, name: r.name, isStandard: r.isStandard, ...stamp('2026-01-02T08:00:00Z'),
      }));
    }
    for (const [user, role] of USER_PARTNER_ROLES) {
      this.em.create(UserPartnerRole, {
        id: this.nextId('userPartnerRole'), user: DemoLoader.get(this.users, user), role: DemoLoader.get(roles, role),
        ...stamp('2026-03-02T10:00:00Z'),
      });
    }
  }

  tradeListsAndCategories(): void {
    const categories = new Map<string, TradeCategory>();
    for (const c of TRADE_CATEGORIES) {
      categories.set(c.id, this.em.create(TradeCategory, { id: c.id, code: c.code, name: c.name, ...stamp('2026-01-02T07:00:00Z') }));
    }
    const mapped = new Set<string>();
    const map = (source: TradeMappingSource, key: string, categoryIds: string[]) => {
      for (const categoryId of categoryIds) {
        const unique = `${source}|${key}|${categoryId}`;
        if (mapped.has(unique)) continue;
        mapped.add(unique);
        this.em.create(TradeCategoryMapping, {
          id: this.nextId('tradeCategoryMapping'), source, key, category: DemoLoader.get(categories, categoryId),
          ...stamp('2026-01-02T07:30:00Z'),
        });
      }
    };
    for (const list of TRADE_LISTS) {
      const tradeList = this.em.create(TradeList, {
        id: list.id, legacyId: demoLegacyId(list.id), name: list.name,
        organization: list.organization ? DemoLoader.get(this.organizations, list.organization) : null, ...stamp(list.createdAt),
      });
      this.tradeLists.set(list.id, tradeList);
      for (const t of list.trades) {
        const id = tradeIdOf(list.tradeIds, t.number);
        this.tradeListTrades.set(id, this.em.create(TradeListTrade, {
          id, legacyId: demoLegacyId(id), tradeList, number: t.number, name: t.name, shortName: t.shortName,
          ...stamp(list.createdAt),
        }));
        map(TradeMappingSource.NAME, normalizeKey(t.name), t.categories);
        map(TradeMappingSource.SVC, id, t.categories);
      }
    }
    for (const [key, categoryIds] of PARTNER_TRADE_CATEGORIES) map(TradeMappingSource.PARTNER, key, categoryIds);
  }

  contractorDirectories(): void {
    for (const c of CONTRACTORS) {
      this.contractors.set(c.id, this.em.create(Contractor, {
        id: c.id, legacyId: demoLegacyId(c.id), organization: DemoLoader.get(this.organizations, c.organization),
        company: c.company ? DemoLoader.get(this.organizations, c.company) : null, name: c.name,
        email: c.email.toLowerCase(), phone: c.phone, fiscalNumber: c.fiscalNumber, ...stamp('2026-02-01T09:00:00Z'),
      }));
    }
  }

  projects(): void {
    for (const p of PROJECTS) {
      const project = this.em.create(Project, {
        id: p.id, legacyId: demoLegacyId(p.id), organization: DemoLoader.get(this.organizations, p.organization),
        name: p.name, constructionType: p.constructionType,
        tradeList: DemoLoader.get(this.tradeLists, p.tradeList.id), responseType: p.responseType,
        endOfOfferDate: p.endOfOfferDate, commencementWorksConstruction: p.commencementWorksConstruction,
        endWorksConstruction: p.endWorksConstruction, tendersClosingActivated: p.tendersClosingActivated,
        publishedOnMarketplace: p.publishedOnMarketplace, scopes: p.scopes, siteAddress: p.siteAddress,
        optionalDates: p.optionalDates, archivedAt: p.archivedAt ? new Date(p.archivedAt) : null,
        ...stamp(p.createdAt, p.archivedAt),
      });
      for (const manager of p.managers) project.managers.add(DemoLoader.get(this.users, manager));
      // The project's trades are copies of its trade list's trades.
      const trades = new Map<string, ProjectTrade>();
      for (const t of p.tradeList.trades) {
        const id = tradeIdOf(p.tradeIds, t.number);
        trades.set(t.number, this.em.create(ProjectTrade, {
          id, legacyId: demoLegacyId(id), project, number: t.number, name: t.name, shortName: t.shortName,
          comment: null, sourceTrade: DemoLoader.get(this.tradeListTrades, tradeIdOf(p.tradeList.tradeIds, t.number)),
          ...stamp(p.createdAt),
        }));
      }
      for (const t of p.templates) {
        const trade = DemoLoader.get(trades, t.trade);
        const main = this.template(project, p, trade, t, null);
        for (const slice of t.slices ?? []) this.pendingSlices.push(() => this.template(project, p, trade, slice, main));
      }
    }
  }

  /**
   * Slices, once their main templates are stored: a slice inserted in the same statement as its parent
   * would be written without `parent_id` first and fixed afterwards, which the one-main-template-per-trade
   * index refuses.
   */
  slices(): void {
    for (const create of this.pendingSlices.splice(0)) create();
  }

  private template(project: Project, p: ProjectSpec, trade: ProjectTrade, t: TemplateSpec, parent: Template | null): Template {
    const invitations = t.documents.map((d) => d.invitedAt).sort();
    const template = this.em.create(Template, {
      id: t.id, legacyId: demoLegacyId(t.id), project, trade, parent, isSlice: parent !== null,
      sliceName: parent ? (t.sliceName ?? null) : null, budget: t.budget, closedAt: t.closedAt ? new Date(t.closedAt) : null,
      versionSaved: t.documents.length > 0 ? 3 : 1, responseType: p.responseType, itemisedSheetVersion: 1,
      itemisedSheetIsDraft: t.documents.length === 0, itemisedSheetHasAdditionalServices: false,
      endOfOfferDate: p.endOfOfferDate ? new Date(`${p.endOfOfferDate}T12:00:00Z`) : null,
      consultationStartedAt: invitations.length > 0 ? new Date(invitations[0]) : null, foldOpened: false,
      favouriteConsultation: null, selectedConsultation: null, ...stamp(t.createdAt),
    });
    if (t.selected || t.favourite) this.choices.push({ template: t.id, selected: t.selected ?? null, favourite: t.favourite ?? null });
    for (const d of t.documents) this.document(template, d);
    return template;
  }

  private document(template: Template, d: DocumentSpec): void {
    const contractor = DemoLoader.get(this.contractors, d.contractor);
    const lastWrite = d.versions.at(-1)?.at;
    const document = this.em.create(Document, {
      id: d.id, legacyId: demoLegacyId(d.id), template, contractor, intention: d.intention,
      dceDownloadedAt: d.dceDownloadedAt ? new Date(d.dceDownloadedAt) : null, ...stamp(d.invitedAt, lastWrite),
    });
    this.documents.push(document);
    d.versions.forEach((v, i) => {
      const files = v.files ?? [];
      const version = this.em.create(DocumentVersion, {
        id: this.nextId('documentVersion'), document, version: i + 1, status: v.status, subTotal: v.subTotal,
        discount: v.discount ?? 0, isMandate: v.isMandate ?? false, hasDpgf: files.some((f) => f.startsWith('DPGF')),
        sentAt: v.status === VersionStatus.DRAFT ? null : new Date(v.at), ...stamp(v.at),
      });
      for (const name of files) {
        const content = fileContent(name, contractor.name, i + 1);
        this.em.create(DocumentFile, {
          id: this.nextId('documentFile'), version, name, contentType: contentTypeOf(name), size: content.length, content,
          ...stamp(v.at),
        });
      }
    });
  }

  /**
   * One INVITATION credit per document, dated over the last four months relative to `now`, plus
   * NORD_EXTRA_CREDITS for Atelier Nord (invitations on consultations deleted since), one in each month.
   */
  creditsLedger(now: Date): void {
    const entry = (organization: Organization, referenceId: string | null, at: Date) => this.em.create(CreditLedgerEntry, {
      id: this.nextId('creditLedgerEntry'), organization, amount: 1, kind: 'INVITATION', referenceId, createdAt: at, updatedAt: at,
    });
    this.documents.forEach((document, i) => entry(document.template.project.organization, document.id, demoCreditDate(i, now)));
    const nord = DemoLoader.get(this.organizations, ORG.atelierNord);
    for (let i = 0; i < NORD_EXTRA_CREDITS; i++) entry(nord, null, demoCreditDate(100 + i, now));
  }
}

function stamp(createdAt: string, updatedAt?: string): { createdAt: Date; updatedAt: Date } {
  return { createdAt: new Date(createdAt), updatedAt: new Date(updatedAt ?? createdAt) };
}

function tradeIdOf(ids: Readonly<Record<string, string>>, number: string): string {
  const id = ids[number];
  if (!id) throw new Error(`demo data: no id for trade ${number}`);
  return id;
}

function contentTypeOf(name: string): string {
  if (name.endsWith('.pdf')) return 'application/pdf';
  if (name.endsWith('.csv')) return 'text/csv';
  return 'application/octet-stream';
}

/** A tiny stand-in for an uploaded file: a minimal PDF, or a short price schedule for a CSV. */
function fileContent(name: string, contractor: string, version: number): Buffer {
  if (name.endsWith('.csv')) {
    return Buffer.from(
      'poste;designation;unite;quantite;prix_unitaire\n' +
      '1.1;Terrassement en pleine masse;m3;320;18.50\n' +
      '1.2;Béton de propreté;m2;410;12.00\n' +
      '2.1;Voiles béton armé ép. 20 cm;m2;1250;86.00\n',
      'utf8',
    );
  }
  return Buffer.from(`%PDF-1.4\n% ${name} - ${contractor} - version ${version} (document de démonstration)\n%%EOF\n`, 'utf8');
}

/** Loads the demo data in one transaction: true when created, false (nothing changed) when architect@demo.test exists. */
export async function loadDemoData(em: EntityManager): Promise<boolean> {
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(?)', [SEED_LOCK_KEY]);
    if ((await tx.count(User, { email: DEMO_USERS.architect })) > 0) return false;

    // A salt per user, as a real sign-up would give: equal passwords must not show as equal hashes.
    const logins = USERS.filter((u) => u.demoLogin);
    const hashes = await Promise.all(logins.map(() => hashPassword(DEMO_PASSWORD)));
    const loader = new DemoLoader(tx, new Map(logins.map((u, i) => [u.id, hashes[i]])));
    loader.organizationsAndUsers();
    loader.partnerRoles();
    loader.tradeListsAndCategories();
    loader.contractorDirectories();
    loader.projects();
    await tx.flush();
    loader.slices();
    loader.creditsLedger(new Date());
    await tx.flush();

    // Template -> document links close a cycle (documents point at their template): set them once both
    // rows exist, with a plain UPDATE so the templates keep their fixed updatedAt.
    for (const c of loader.choices) {
      await tx.nativeUpdate(Template, { id: c.template }, { selectedConsultation: c.selected, favouriteConsultation: c.favourite });
    }
    // The in-memory templates do not know those links: keep them out of the caller's context.
    tx.clear();
    return true;
  });
}
