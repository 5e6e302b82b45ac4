// Over 400 lines: data, not logic (every demo record, in the order decisions.md section 3 lists them).
/**
 * The demo data's records (decisions.md section 3): the users, organizations, projects, consultations and answers
 * that `npm start` loads on the embedded default database and that the tests rely on. Everything is deterministic
 * (fixed ids and timestamps) but for the credits ledger, spread over the current UTC month and the three before it
 * (`demoCreditDate`), so that a credits-usage report over "the last months" always has something to count.
 * demo-data.ts loads them.
 *
 * Above 400 lines on purpose: data, not logic, one table per kind of record in the order the story of the demo
 * reads (organizations, users, trade lists, contractors, projects with their consultations and answers); split,
 * the cross-references between the tables would be harder to follow.
 */
import {
  Intention, MembershipRole, OrganizationKind, VersionStatus,
  type ConstructionType, type OrganizationAddress, type ProjectOptionalDates, type ProjectScopes,
  type ProjectSiteAddress, type ResponseType,
} from '../modules/entities';
import { DEMO_IDS, DEMO_SIRETS, DEMO_USERS } from './demo-ids';

// ---------------------------------------------------------------------------------------------------------
// Organizations, headquarter, users
// ---------------------------------------------------------------------------------------------------------

export const ORG = DEMO_IDS.organizations;
export const USR = DEMO_IDS.users;

export interface OrganizationSpec {
  id: string;
  name: string;
  kind: OrganizationKind;
  fiscalNumber: string;
  address: OrganizationAddress;
  businessSectors: string[];
  inHeadquarter: boolean;
  createdAt: string;
}

function address(number: string, street: string, zipCode: string, city: string): OrganizationAddress {
  return { number, address: street, zipCode, city, country: 'fr' };
}

export const ORGANIZATIONS: OrganizationSpec[] = [
  {
    id: ORG.atelierDemo, name: 'Atelier Demo', kind: OrganizationKind.ARCHITECT, fiscalNumber: '81234567800016',
    address: address('12', 'rue de la République', '69002', 'Lyon'), businessSectors: ['Architecture'],
    inHeadquarter: true, createdAt: '2026-01-05T09:00:00Z',
  },
  {
    id: ORG.atelierNord, name: 'Atelier Nord', kind: OrganizationKind.ARCHITECT, fiscalNumber: '82345678900021',
    address: address('45', 'quai du Wault', '59000', 'Lille'), businessSectors: ['Architecture'],
    inHeadquarter: true, createdAt: '2026-01-05T09:10:00Z',
  },
  {
    id: ORG.cabinetSud, name: 'Cabinet Sud', kind: OrganizationKind.ARCHITECT, fiscalNumber: '83456789000035',
    address: address('8', 'cours Mirabeau', '13100', 'Aix-en-Provence'), businessSectors: ['Architecture'],
    inHeadquarter: false, createdAt: '2026-01-06T10:00:00Z',
  },
  {
    id: ORG.batimentsDurand, name: 'Bâtiments Durand SAS', kind: OrganizationKind.CONTRACTOR,
    fiscalNumber: DEMO_SIRETS.shared, address: address('27', 'avenue Jean Jaurès', '69007', 'Lyon'),
    businessSectors: ['Construction', 'Gros œuvre', 'Maçonnerie'], inHeadquarter: false, createdAt: '2026-01-12T08:00:00Z',
  },
  {
    id: ORG.durandRenovation, name: 'Durand Rénovation', kind: OrganizationKind.CONTRACTOR,
    fiscalNumber: DEMO_SIRETS.shared, address: address('5', 'rue des Tanneurs', '38000', 'Grenoble'),
    businessSectors: ['Construction', 'Rénovation'], inHeadquarter: false, createdAt: '2026-01-12T08:05:00Z',
  },
  {
    id: ORG.electriciteMartin, name: 'Électricité Martin SARL', kind: OrganizationKind.CONTRACTOR,
    fiscalNumber: DEMO_SIRETS.single, address: address('3', 'rue Paul Bert', '69003', 'Lyon'),
    businessSectors: ['Construction', 'Électricité'], inHeadquarter: false, createdAt: '2026-01-12T08:10:00Z',
  },
  {
    id: ORG.charpentesVercors, name: 'Charpentes du Vercors', kind: OrganizationKind.CONTRACTOR,
    fiscalNumber: '44306184100047', address: address('150', 'route de Lans', '38250', 'Villard-de-Lans'),
    businessSectors: ['Charpente', 'Couverture'], inHeadquarter: false, createdAt: '2026-01-12T08:15:00Z',
  },
  {
    id: ORG.plomberieLefevre, name: 'Plomberie Lefèvre', kind: OrganizationKind.CONTRACTOR,
    fiscalNumber: '39087452600018', address: address('61', 'boulevard des Belges', '69006', 'Lyon'),
    businessSectors: ['Plomberie', 'Chauffage', 'Ventilation'], inHeadquarter: false, createdAt: '2026-01-12T08:20:00Z',
  },
];

export interface UserSpec {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  phone: string;
  mobile: string | null;
  /** Demo users sign in with DEMO_PASSWORD and may use the API; contractor contacts do not. */
  demoLogin: boolean;
  apiEnabled: boolean;
  isRegistered: boolean;
  currentOrganization: string;
  memberships: Array<[organization: string, role: MembershipRole]>;
  createdAt: string;
}

const { ADMINISTRATOR, MEMBER } = MembershipRole;

export const USERS: UserSpec[] = [
  {
    id: USR.architect, email: DEMO_USERS.architect, firstName: 'Claire', lastName: 'Dubois',
    phone: '04 72 10 20 30', mobile: '06 12 34 56 78', demoLogin: true, apiEnabled: true, isRegistered: true,
    currentOrganization: ORG.atelierDemo,
    memberships: [[ORG.atelierDemo, ADMINISTRATOR], [ORG.atelierNord, ADMINISTRATOR]], createdAt: '2026-01-05T09:30:00Z',
  },
  {
    id: USR.other, email: DEMO_USERS.other, firstName: 'Julien', lastName: 'Roux',
    phone: '04 42 27 15 60', mobile: null, demoLogin: true, apiEnabled: true, isRegistered: true,
    currentOrganization: ORG.cabinetSud, memberships: [[ORG.cabinetSud, ADMINISTRATOR]], createdAt: '2026-01-06T10:30:00Z',
  },
  {
    id: USR.member, email: DEMO_USERS.member, firstName: 'Sophie', lastName: 'Garnier',
    phone: '04 72 10 20 31', mobile: '06 98 76 54 32', demoLogin: true, apiEnabled: true, isRegistered: true,
    currentOrganization: ORG.atelierDemo, memberships: [[ORG.atelierDemo, MEMBER]], createdAt: '2026-01-07T09:00:00Z',
  },
  {
    id: USR.noapi, email: DEMO_USERS.noapi, firstName: 'Marc', lastName: 'Henry',
    phone: '04 72 10 20 32', mobile: null, demoLogin: true, apiEnabled: false, isRegistered: true,
    currentOrganization: ORG.atelierDemo, memberships: [[ORG.atelierDemo, ADMINISTRATOR]], createdAt: '2026-01-07T09:15:00Z',
  },
  {
    id: USR.pierreDurand, email: 'p.durand@batiments-durand.fr', firstName: 'Pierre', lastName: 'Durand',
    phone: '04 78 58 12 30', mobile: '06 72 45 18 90', demoLogin: false, apiEnabled: false, isRegistered: true,
    currentOrganization: ORG.batimentsDurand, memberships: [[ORG.batimentsDurand, MEMBER]], createdAt: '2026-01-12T08:30:00Z',
  },
  {
    id: USR.nathalieDurand, email: 'n.durand@batiments-durand.fr', firstName: 'Nathalie', lastName: 'Durand',
    phone: '04 78 58 12 31', mobile: null, demoLogin: false, apiEnabled: false, isRegistered: true,
    currentOrganization: ORG.batimentsDurand, memberships: [[ORG.batimentsDurand, MEMBER]], createdAt: '2026-01-12T08:31:00Z',
  },
  {
    id: USR.antoineDurand, email: 'contact@durand-renovation.fr', firstName: 'Antoine', lastName: 'Durand',
    phone: '04 76 43 22 10', mobile: '06 81 27 63 04', demoLogin: false, apiEnabled: false, isRegistered: true,
    currentOrganization: ORG.durandRenovation, memberships: [[ORG.durandRenovation, MEMBER]], createdAt: '2026-01-12T08:32:00Z',
  },
  {
    id: USR.lucMartin, email: 'luc.martin@electricite-martin.fr', firstName: 'Luc', lastName: 'Martin',
    phone: '04 72 33 90 14', mobile: '06 14 92 37 58', demoLogin: false, apiEnabled: false, isRegistered: true,
    currentOrganization: ORG.electriciteMartin, memberships: [[ORG.electriciteMartin, MEMBER]], createdAt: '2026-01-12T08:33:00Z',
  },
  {
    id: USR.elodieChabert, email: 'e.chabert@charpentes-vercors.fr', firstName: 'Élodie', lastName: 'Chabert',
    phone: '04 76 95 08 44', mobile: null, demoLogin: false, apiEnabled: false, isRegistered: false,
    currentOrganization: ORG.charpentesVercors, memberships: [[ORG.charpentesVercors, MEMBER]], createdAt: '2026-01-12T08:34:00Z',
  },
  {
    id: USR.thomasLefevre, email: 't.lefevre@plomberie-lefevre.fr', firstName: 'Thomas', lastName: 'Lefèvre',
    phone: '04 78 24 61 70', mobile: '07 68 12 45 09', demoLogin: false, apiEnabled: false, isRegistered: true,
    currentOrganization: ORG.plomberieLefevre, memberships: [[ORG.plomberieLefevre, MEMBER]], createdAt: '2026-01-12T08:35:00Z',
  },
];

// ---------------------------------------------------------------------------------------------------------
// Trade categories and trade lists
// ---------------------------------------------------------------------------------------------------------

const CAT = DEMO_IDS.tradeCategories;

export const TRADE_CATEGORIES: Array<{ id: string; code: string; name: string }> = [
  { id: CAT.structure, code: 'STRUCTURE', name: 'Gros œuvre et structure' },
  { id: CAT.enveloppe, code: 'ENVELOPPE', name: 'Clos et couvert' },
  { id: CAT.finitions, code: 'FINITIONS', name: 'Second œuvre et finitions' },
  { id: CAT.electricite, code: 'ELECTRICITE', name: 'Électricité courants forts et faibles' },
  { id: CAT.fluides, code: 'FLUIDES', name: 'Plomberie, chauffage et ventilation' },
  { id: CAT.demolition, code: 'DEMOLITION', name: 'Démolition et désamiantage' },
  { id: CAT.vrd, code: 'VRD', name: 'Voirie et réseaux divers' },
];

/** Partner-platform trade ids and their categories. */
export const PARTNER_TRADE_CATEGORIES: Array<[key: string, categories: string[]]> = [
  ['1001', [CAT.structure]],
  ['1002', [CAT.structure, CAT.enveloppe]],
  ['1003', [CAT.electricite]],
  ['1004', [CAT.fluides]],
  ['1005', [CAT.finitions]],
];

interface TradeSpec {
  number: string;
  name: string;
  shortName: string;
  categories: string[];
}

export interface TradeListSpec {
  id: string;
  name: string;
  organization: string | null;
  tradeIds: Readonly<Record<string, string>>;
  trades: TradeSpec[];
  createdAt: string;
}

export const TRADE_LISTS: TradeListSpec[] = [
  {
    id: DEMO_IDS.tradeLists.standard, name: 'Lots standard bâtiment', organization: null,
    tradeIds: DEMO_IDS.tradeListTrades.standard, createdAt: '2026-01-02T08:00:00Z',
    trades: [
      { number: '01', name: 'Gros œuvre', shortName: 'GO', categories: [CAT.structure] },
      { number: '02', name: 'Charpente', shortName: 'CH', categories: [CAT.structure, CAT.enveloppe] },
      { number: '03', name: 'Couverture', shortName: 'CO', categories: [CAT.enveloppe] },
      { number: '04', name: 'Menuiseries extérieures', shortName: 'ME', categories: [CAT.enveloppe] },
      { number: '05', name: 'Plâtrerie', shortName: 'PL', categories: [CAT.finitions] },
      { number: '06', name: 'Électricité', shortName: 'EL', categories: [CAT.electricite] },
      { number: '07', name: 'Plomberie', shortName: 'PB', categories: [CAT.fluides] },
      { number: '08', name: 'Peinture', shortName: 'PE', categories: [CAT.finitions] },
    ],
  },
  {
    id: DEMO_IDS.tradeLists.atelierDemo, name: 'Réhabilitation – lots Atelier Demo', organization: ORG.atelierDemo,
    tradeIds: DEMO_IDS.tradeListTrades.atelierDemo, createdAt: '2026-01-20T14:00:00Z',
    trades: [
      { number: '01', name: 'Désamiantage', shortName: 'DES', categories: [CAT.demolition] },
      { number: '02', name: 'Curage et démolition', shortName: 'DEM', categories: [CAT.demolition] },
      { number: '03', name: 'Gros œuvre', shortName: 'GO', categories: [CAT.structure] },
      { number: '04', name: 'Menuiseries intérieures', shortName: 'MI', categories: [CAT.finitions] },
      { number: '05', name: 'Revêtements de sols', shortName: 'RS', categories: [CAT.finitions] },
    ],
  },
  {
    id: DEMO_IDS.tradeLists.cabinetSud, name: 'Équipements publics – Cabinet Sud', organization: ORG.cabinetSud,
    tradeIds: DEMO_IDS.tradeListTrades.cabinetSud, createdAt: '2026-01-21T15:00:00Z',
    trades: [
      { number: '01', name: 'Voirie et réseaux divers', shortName: 'VRD', categories: [CAT.vrd] },
      { number: '02', name: 'Charpente métallique', shortName: 'CM', categories: [CAT.structure, CAT.enveloppe] },
      { number: '03', name: 'Couverture', shortName: 'CO', categories: [CAT.enveloppe] },
    ],
  },
];

export const PARTNER_ROLES: Array<{ id: string; code: string; name: string; isStandard: boolean }> = [
  { id: DEMO_IDS.partnerRoles.standard, code: 'PARTNER_STANDARD', name: 'Utilisateur partenaire', isStandard: true },
  { id: DEMO_IDS.partnerRoles.admin, code: 'PARTNER_ADMIN', name: 'Administrateur partenaire', isStandard: false },
  { id: DEMO_IDS.partnerRoles.viewer, code: 'PARTNER_VIEWER', name: 'Lecteur partenaire', isStandard: false },
];

/** Partner roles currently held: [user, role]. */
export const USER_PARTNER_ROLES: Array<[user: string, role: string]> = [[USR.architect, DEMO_IDS.partnerRoles.viewer]];

// ---------------------------------------------------------------------------------------------------------
// Contractor directories
// ---------------------------------------------------------------------------------------------------------

const CTR = DEMO_IDS.contractors;

export interface ContractorSpec {
  id: string;
  organization: string;
  name: string;
  email: string;
  phone: string | null;
  company: string | null;
  fiscalNumber: string | null;
}

export const CONTRACTORS: ContractorSpec[] = [
  // Atelier Demo
  { id: CTR.batimentsDurand, organization: ORG.atelierDemo, name: 'Bâtiments Durand SAS', email: 'p.durand@batiments-durand.fr',
    phone: '04 78 58 12 30', company: ORG.batimentsDurand, fiscalNumber: DEMO_SIRETS.shared },
  { id: CTR.durandRenovation, organization: ORG.atelierDemo, name: 'Durand Rénovation', email: 'contact@durand-renovation.fr',
    phone: '04 76 43 22 10', company: ORG.durandRenovation, fiscalNumber: DEMO_SIRETS.shared },
  { id: CTR.electriciteMartin, organization: ORG.atelierDemo, name: 'Électricité Martin SARL', email: 'luc.martin@electricite-martin.fr',
    phone: '04 72 33 90 14', company: ORG.electriciteMartin, fiscalNumber: DEMO_SIRETS.single },
  { id: CTR.charpentesVercors, organization: ORG.atelierDemo, name: 'Charpentes du Vercors', email: 'e.chabert@charpentes-vercors.fr',
    phone: '04 76 95 08 44', company: ORG.charpentesVercors, fiscalNumber: '44306184100047' },
  { id: CTR.plomberieLefevre, organization: ORG.atelierDemo, name: 'Plomberie Lefèvre', email: 't.lefevre@plomberie-lefevre.fr',
    phone: '04 78 24 61 70', company: ORG.plomberieLefevre, fiscalNumber: '39087452600018' },
  { id: CTR.maconneriePetit, organization: ORG.atelierDemo, name: 'Maçonnerie Petit et Fils', email: 'devis@maconnerie-petit.fr',
    phone: '04 74 61 22 85', company: null, fiscalNumber: null },
  { id: CTR.btpMoreau, organization: ORG.atelierDemo, name: 'BTP Moreau', email: 'contact@btp-moreau.fr',
    phone: null, company: null, fiscalNumber: '79845612300028' },
  { id: CTR.elecServices, organization: ORG.atelierDemo, name: 'Élec Services 69', email: 'bureau@elec-services69.fr',
    phone: '04 78 90 12 34', company: null, fiscalNumber: null },
  { id: CTR.sanitairesGirard, organization: ORG.atelierDemo, name: 'Sanitaires Girard', email: 'girard.sanitaires@orange.fr',
    phone: null, company: null, fiscalNumber: null },
  { id: CTR.menuiserieBernard, organization: ORG.atelierDemo, name: 'Menuiserie Bernard', email: 'atelier@menuiserie-bernard.fr',
    phone: '04 77 32 18 06', company: null, fiscalNumber: '52148963700015' },
  // Atelier Nord
  { id: CTR.nordElectriciteMartin, organization: ORG.atelierNord, name: 'Électricité Martin SARL', email: 'luc.martin@electricite-martin.fr',
    phone: '04 72 33 90 14', company: ORG.electriciteMartin, fiscalNumber: DEMO_SIRETS.single },
  { id: CTR.nordCourantsLambert, organization: ORG.atelierNord, name: 'Courants Faibles Lambert', email: 'contact@cf-lambert.fr',
    phone: '03 20 54 87 12', company: null, fiscalNumber: null },
  { id: CTR.nordElectriciteFlandres, organization: ORG.atelierNord, name: 'Électricité des Flandres', email: 'devis@electricite-flandres.fr',
    phone: null, company: null, fiscalNumber: null },
  // Cabinet Sud
  { id: CTR.sudCharpentesVercors, organization: ORG.cabinetSud, name: 'Charpentes du Vercors', email: 'e.chabert@charpentes-vercors.fr',
    phone: '04 76 95 08 44', company: ORG.charpentesVercors, fiscalNumber: '44306184100047' },
];

// ---------------------------------------------------------------------------------------------------------
// Projects, templates, invitations and answers
// ---------------------------------------------------------------------------------------------------------

const DOC = DEMO_IDS.documents;
const TPL = DEMO_IDS.templates;
const { ANSWERED, IN_REVISION, DECLINED } = VersionStatus;
const { DRAFT } = VersionStatus;
const { YES, NO, MAYBE } = Intention;

interface VersionSpec {
  status: VersionStatus;
  subTotal: number;
  discount?: number;
  isMandate?: boolean;
  /** When the version was written; its `sentAt` unless it is a draft. */
  at: string;
  /** Attached file names; a name starting with "DPGF" makes `hasDpgf` true. */
  files?: string[];
}

export interface DocumentSpec {
  id: string;
  contractor: string;
  intention: Intention | null;
  invitedAt: string;
  dceDownloadedAt: string | null;
  versions: VersionSpec[];
}

export interface TemplateSpec {
  id: string;
  /** Trade number inside the project. */
  trade: string;
  budget: number;
  createdAt: string;
  /** Set for a slice; the slices of a template are listed in its `slices`. */
  sliceName?: string;
  slices?: TemplateSpec[];
  selected?: string;
  favourite?: string;
  closedAt?: string;
  documents: DocumentSpec[];
}

export interface ProjectSpec {
  id: string;
  organization: string;
  name: string;
  constructionType: ConstructionType;
  responseType: ResponseType;
  tradeList: TradeListSpec;
  tradeIds: Readonly<Record<string, string>>;
  managers: string[];
  endOfOfferDate: string | null;
  commencementWorksConstruction: string | null;
  endWorksConstruction: string | null;
  tendersClosingActivated: boolean;
  publishedOnMarketplace: boolean;
  scopes: ProjectScopes;
  siteAddress: ProjectSiteAddress;
  optionalDates: ProjectOptionalDates;
  createdAt: string;
  archivedAt?: string;
  templates: TemplateSpec[];
}

const [STANDARD_LIST, ATELIER_DEMO_LIST, CABINET_SUD_LIST] = TRADE_LISTS;
const DEMO_SCOPES: ProjectScopes = { currency: 'EUR', vat: 20, prorate: 2, levels: 3 };

export const PROJECTS: ProjectSpec[] = [
  {
    id: DEMO_IDS.projects.residence, organization: ORG.atelierDemo, name: 'Résidence Les Tilleuls – 42 logements',
    constructionType: 'collective_building', responseType: 'DPGF', tradeList: STANDARD_LIST,
    tradeIds: DEMO_IDS.projectTrades.residence, managers: [USR.architect],
    endOfOfferDate: '2027-01-29', commencementWorksConstruction: '2027-04-05', endWorksConstruction: '2028-09-29',
    tendersClosingActivated: true, publishedOnMarketplace: false, scopes: DEMO_SCOPES,
    siteAddress: { number: 14, zipCode: 69003 }, optionalDates: { noc: '2026-12-15', responsesOpeningDate: '2027-02-01' },
    createdAt: '2026-06-02T08:30:00Z',
    templates: [
      {
        id: TPL.residenceGrosOeuvre, trade: '01', budget: 120000.0, createdAt: '2026-09-10T09:00:00Z',
        selected: DOC.residenceGoPetit, favourite: DOC.residenceGoDurand,
        documents: [
          { id: DOC.residenceGoDurand, contractor: CTR.batimentsDurand, intention: YES,
            invitedAt: '2026-09-14T08:00:00Z', dceDownloadedAt: '2026-09-15T10:12:00Z', versions: [
              { status: ANSWERED, subTotal: 118000.0, discount: 1500.0, at: '2026-10-06T16:20:00Z', files: ['DPGF-lot-01.pdf'] },
              { status: ANSWERED, subTotal: 116500.0, discount: 1000.0, at: '2026-10-27T11:05:00Z',
                files: ['DPGF-lot-01.pdf', 'Memoire-technique.pdf'] },
            ] },
          { id: DOC.residenceGoPetit, contractor: CTR.maconneriePetit, intention: YES,
            invitedAt: '2026-09-14T08:00:00Z', dceDownloadedAt: '2026-09-16T07:45:00Z', versions: [
              { status: ANSWERED, subTotal: 124800.0, isMandate: true, at: '2026-10-09T14:30:00Z',
                files: ['DPGF-lot-01.pdf', 'Bordereau-prix-lot-01.csv'] },
            ] },
          { id: DOC.residenceGoMoreau, contractor: CTR.btpMoreau, intention: MAYBE,
            invitedAt: '2026-09-14T08:00:00Z', dceDownloadedAt: '2026-09-18T09:00:00Z', versions: [
              { status: ANSWERED, subTotal: 131000.0, discount: 2000.0, at: '2026-10-12T17:40:00Z', files: ['DPGF-lot-01.pdf'] },
              { status: IN_REVISION, subTotal: 127500.0, at: '2026-11-03T09:25:00Z' },
            ] },
          { id: DOC.residenceGoDurandRenovation, contractor: CTR.durandRenovation, intention: null,
            invitedAt: '2026-09-14T08:00:00Z', dceDownloadedAt: null, versions: [] },
        ],
        slices: [
          {
            id: TPL.residenceGrosOeuvreTranche1, trade: '01', sliceName: 'Tranche 1', budget: 45000.5,
            createdAt: '2026-09-10T09:05:00Z',
            documents: [
              { id: DOC.residenceTranche1Durand, contractor: CTR.batimentsDurand, intention: YES,
                invitedAt: '2026-09-14T08:05:00Z', dceDownloadedAt: '2026-09-21T13:00:00Z', versions: [
                  { status: ANSWERED, subTotal: 43800.0, discount: 250.5, at: '2026-10-14T10:00:00Z',
                    files: ['DPGF-lot-01-tranche-1.pdf'] },
                ] },
              { id: DOC.residenceTranche1Petit, contractor: CTR.maconneriePetit, intention: NO,
                invitedAt: '2026-09-14T08:05:00Z', dceDownloadedAt: '2026-09-22T08:30:00Z', versions: [
                  { status: DECLINED, subTotal: 0, at: '2026-09-30T15:10:00Z' },
                ] },
            ],
          },
          {
            id: TPL.residenceGrosOeuvreTranche2, trade: '01', sliceName: 'Tranche 2', budget: 38000.0,
            createdAt: '2026-09-10T09:10:00Z',
            documents: [
              { id: DOC.residenceTranche2Moreau, contractor: CTR.btpMoreau, intention: YES,
                invitedAt: '2026-09-14T08:10:00Z', dceDownloadedAt: '2026-09-25T11:20:00Z', versions: [
                  { status: DRAFT, subTotal: 36200.0, at: '2026-11-10T16:45:00Z' },
                ] },
              { id: DOC.residenceTranche2DurandRenovation, contractor: CTR.durandRenovation, intention: MAYBE,
                invitedAt: '2026-09-14T08:10:00Z', dceDownloadedAt: null, versions: [] },
            ],
          },
        ],
      },
      {
        id: TPL.residenceCharpente, trade: '02', budget: 65000.0, createdAt: '2026-09-10T09:20:00Z',
        documents: [
          { id: DOC.residenceCharpenteVercors, contractor: CTR.charpentesVercors, intention: YES,
            invitedAt: '2026-09-15T08:00:00Z', dceDownloadedAt: '2026-09-17T14:05:00Z', versions: [
              { status: ANSWERED, subTotal: 61200.0, isMandate: true, at: '2026-10-20T09:50:00Z', files: ['DPGF-lot-02.pdf'] },
            ] },
          { id: DOC.residenceCharpenteDurand, contractor: CTR.batimentsDurand, intention: YES,
            invitedAt: '2026-09-15T08:00:00Z', dceDownloadedAt: '2026-09-19T10:00:00Z', versions: [
              { status: ANSWERED, subTotal: 68900.0, discount: 900.0, at: '2026-10-22T18:15:00Z' },
            ] },
          { id: DOC.residenceCharpenteDurandRenovation, contractor: CTR.durandRenovation, intention: NO,
            invitedAt: '2026-09-15T08:00:00Z', dceDownloadedAt: null, versions: [
              { status: DECLINED, subTotal: 0, at: '2026-09-28T12:00:00Z' },
            ] },
        ],
      },
      {
        id: TPL.residenceElectricite, trade: '06', budget: 48500.0, createdAt: '2026-09-10T09:30:00Z',
        documents: [
          { id: DOC.residenceElecMartin, contractor: CTR.electriciteMartin, intention: YES,
            invitedAt: '2026-09-16T08:00:00Z', dceDownloadedAt: '2026-09-16T15:30:00Z', versions: [
              { status: ANSWERED, subTotal: 50250.0, at: '2026-10-29T11:00:00Z', files: ['DPGF-lot-06.pdf'] },
            ] },
          { id: DOC.residenceElecServices, contractor: CTR.elecServices, intention: null,
            invitedAt: '2026-09-16T08:00:00Z', dceDownloadedAt: null, versions: [
              { status: DRAFT, subTotal: 47000.0, at: '2026-11-12T10:30:00Z' },
            ] },
        ],
      },
      {
        id: TPL.residencePlomberie, trade: '07', budget: 39000.0, createdAt: '2026-09-10T09:40:00Z',
        documents: [
          { id: DOC.residencePlomberieLefevre, contractor: CTR.plomberieLefevre, intention: YES,
            invitedAt: '2026-09-16T08:30:00Z', dceDownloadedAt: '2026-09-18T16:40:00Z', versions: [
              { status: IN_REVISION, subTotal: 40100.0, at: '2026-11-05T14:20:00Z' },
            ] },
          { id: DOC.residencePlomberieGirard, contractor: CTR.sanitairesGirard, intention: NO,
            invitedAt: '2026-09-16T08:30:00Z', dceDownloadedAt: null, versions: [] },
        ],
      },
    ],
  },
  {
    id: DEMO_IDS.projects.school, organization: ORG.atelierDemo, name: 'Groupe scolaire Jules Ferry – restructuration',
    constructionType: 'public_building', responseType: 'DPGF_QUOTE', tradeList: ATELIER_DEMO_LIST,
    tradeIds: DEMO_IDS.projectTrades.school, managers: [USR.architect],
    endOfOfferDate: '2027-02-12', commencementWorksConstruction: '2027-07-05', endWorksConstruction: '2028-08-25',
    tendersClosingActivated: false, publishedOnMarketplace: true, scopes: DEMO_SCOPES,
    siteAddress: { number: 3, zipCode: 69007 }, optionalDates: { noc: null, responsesOpeningDate: '2027-02-15' },
    createdAt: '2026-08-24T10:15:00Z',
    templates: [
      {
        id: TPL.schoolDemolition, trade: '02', budget: 28000.0, createdAt: '2026-09-01T10:00:00Z',
        documents: [
          { id: DOC.schoolDemolitionPetit, contractor: CTR.maconneriePetit, intention: YES,
            invitedAt: '2026-09-02T09:00:00Z', dceDownloadedAt: '2026-09-03T08:15:00Z', versions: [
              { status: ANSWERED, subTotal: 26500.0, discount: 500.0, at: '2026-10-01T10:40:00Z', files: ['DPGF-lot-02.pdf'] },
            ] },
          { id: DOC.schoolDemolitionMoreau, contractor: CTR.btpMoreau, intention: MAYBE,
            invitedAt: '2026-09-02T09:00:00Z', dceDownloadedAt: '2026-09-04T13:30:00Z', versions: [
              { status: ANSWERED, subTotal: 29000.0, at: '2026-10-02T17:05:00Z',
                files: ['DPGF-lot-02.pdf', 'Memoire-technique.pdf'] },
            ] },
        ],
      },
      {
        id: TPL.schoolMenuiseries, trade: '04', budget: 42000.0, createdAt: '2026-09-01T10:10:00Z',
        documents: [
          { id: DOC.schoolMenuiserieBernard, contractor: CTR.menuiserieBernard, intention: MAYBE,
            invitedAt: '2026-09-02T09:10:00Z', dceDownloadedAt: '2026-09-05T09:45:00Z', versions: [
              { status: IN_REVISION, subTotal: 43500.0, at: '2026-10-08T15:00:00Z' },
            ] },
          { id: DOC.schoolMenuiserieDurand, contractor: CTR.batimentsDurand, intention: NO,
            invitedAt: '2026-09-02T09:10:00Z', dceDownloadedAt: null, versions: [
              { status: DECLINED, subTotal: 0, at: '2026-09-12T11:30:00Z' },
            ] },
          { id: DOC.schoolMenuiserieDurandRenovation, contractor: CTR.durandRenovation, intention: YES,
            invitedAt: '2026-09-02T09:10:00Z', dceDownloadedAt: '2026-09-08T07:55:00Z', versions: [] },
        ],
      },
    ],
  },
  {
    id: DEMO_IDS.projects.archivedHouse, organization: ORG.atelierDemo, name: 'Maison individuelle Laurent',
    constructionType: 'single_flat', responseType: 'QUOTE', tradeList: STANDARD_LIST,
    tradeIds: DEMO_IDS.projectTrades.archivedHouse, managers: [USR.architect],
    endOfOfferDate: '2026-04-30', commencementWorksConstruction: '2026-06-15', endWorksConstruction: '2027-03-31',
    tendersClosingActivated: true, publishedOnMarketplace: false,
    scopes: { currency: 'EUR', vat: 10, prorate: null, levels: 2 },
    siteAddress: { number: 7, zipCode: 69290 }, optionalDates: { noc: null, responsesOpeningDate: null },
    createdAt: '2026-02-09T09:00:00Z', archivedAt: '2026-09-30T16:00:00Z',
    templates: [
      {
        id: TPL.archivedHouseGrosOeuvre, trade: '01', budget: 85000.0, createdAt: '2026-02-16T10:00:00Z',
        closedAt: '2026-05-04T12:00:00Z', selected: DOC.archivedHouseGoPetit,
        documents: [
          { id: DOC.archivedHouseGoPetit, contractor: CTR.maconneriePetit, intention: YES,
            invitedAt: '2026-02-17T08:00:00Z', dceDownloadedAt: '2026-02-18T09:30:00Z', versions: [
              { status: ANSWERED, subTotal: 83200.0, at: '2026-04-22T16:00:00Z', files: ['DPGF-lot-01.pdf'] },
            ] },
        ],
      },
    ],
  },
  {
    id: DEMO_IDS.projects.nordOffices, organization: ORG.atelierNord, name: 'Plateau de bureaux Quai Nord',
    constructionType: 'office', responseType: 'DPGF', tradeList: STANDARD_LIST,
    tradeIds: DEMO_IDS.projectTrades.nordOffices, managers: [USR.architect],
    endOfOfferDate: '2027-01-15', commencementWorksConstruction: '2027-03-01', endWorksConstruction: '2027-12-17',
    tendersClosingActivated: false, publishedOnMarketplace: false,
    scopes: { currency: 'EUR', vat: 20, prorate: 1.5, levels: 6 },
    siteAddress: { number: 120, zipCode: 59000 }, optionalDates: { noc: '2026-12-01', responsesOpeningDate: null },
    createdAt: '2026-07-15T13:45:00Z',
    templates: [
      {
        id: TPL.nordOfficesElectricite, trade: '06', budget: 56000.0, createdAt: '2026-09-07T09:00:00Z',
        documents: [
          { id: DOC.nordElecMartin, contractor: CTR.nordElectriciteMartin, intention: YES,
            invitedAt: '2026-09-08T08:00:00Z', dceDownloadedAt: '2026-09-09T10:00:00Z', versions: [
              { status: ANSWERED, subTotal: 54000.0, discount: 750.0, at: '2026-10-16T15:45:00Z', files: ['DPGF-lot-06.pdf'] },
            ] },
          { id: DOC.nordElecLambert, contractor: CTR.nordCourantsLambert, intention: NO,
            invitedAt: '2026-09-08T08:00:00Z', dceDownloadedAt: '2026-09-10T11:00:00Z', versions: [
              { status: DECLINED, subTotal: 0, at: '2026-09-20T09:00:00Z' },
            ] },
          { id: DOC.nordElecFlandres, contractor: CTR.nordElectriciteFlandres, intention: null,
            invitedAt: '2026-09-08T08:00:00Z', dceDownloadedAt: null, versions: [] },
        ],
      },
    ],
  },
  {
    id: DEMO_IDS.projects.cabinetSudHall, organization: ORG.cabinetSud, name: 'Halle de marché couverte de Carpentras',
    constructionType: 'public_space', responseType: 'DPGF', tradeList: CABINET_SUD_LIST,
    tradeIds: DEMO_IDS.projectTrades.cabinetSudHall, managers: [USR.other],
    endOfOfferDate: '2027-03-05', commencementWorksConstruction: '2027-06-01', endWorksConstruction: '2028-04-28',
    tendersClosingActivated: false, publishedOnMarketplace: false,
    scopes: { currency: 'EUR', vat: 20, prorate: 0, levels: 1 },
    siteAddress: { number: 1, zipCode: 84200 }, optionalDates: { noc: null, responsesOpeningDate: '2027-03-08' },
    createdAt: '2026-05-20T09:20:00Z',
    templates: [
      {
        id: TPL.cabinetSudCharpente, trade: '02', budget: 150000.0, createdAt: '2026-09-21T08:00:00Z',
        documents: [
          { id: DOC.sudCharpenteVercors, contractor: CTR.sudCharpentesVercors, intention: YES,
            invitedAt: '2026-09-22T08:00:00Z', dceDownloadedAt: '2026-09-23T09:15:00Z', versions: [
              { status: ANSWERED, subTotal: 147000.0, discount: 2000.0, at: '2026-10-30T10:00:00Z', files: ['DPGF-lot-02.pdf'] },
            ] },
        ],
      },
    ],
  },
];

// ---------------------------------------------------------------------------------------------------------
// Credits ledger dates
// ---------------------------------------------------------------------------------------------------------

/** Time of the i-th demo credit entry: in the UTC month `i % 4` months before `now`'s, on a day chosen from i, never after `now`. */
export function demoCreditDate(i: number, now: Date): Date {
  const monthsBack = i % 4;
  const day = 1 + ((i * 7) % 28);
  const candidate = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, day, 8 + (i % 10), (i * 13) % 60));
  if (candidate.getTime() <= now.getTime()) return candidate;
  // The current month has not reached that day yet: place the entry between the 1st and now.
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  return new Date(monthStart + Math.floor(((now.getTime() - monthStart) * ((i * 37) % 97)) / 97));
}

