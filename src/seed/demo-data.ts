/**
 * Demo data (decisions.md section 3): the users, organizations, projects, consultations and answers that
 * `npm start` loads on the embedded default database and that the tests rely on.
 *
 * Everything is deterministic: fixed UUIDs (`DEMO_IDS`), fixed 17-character legacy identifiers
 * (`demoLegacyId`) and fixed timestamps. The only exception is the credits ledger, whose entries are
 * spread over the current UTC month and the three before it (`demoCreditDate`), so that a credits-usage
 * report over "the last months" always has something to count.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  Contractor, CreditLedgerEntry, Document, DocumentFile, DocumentVersion, Headquarter, Intention, Membership,
  MembershipRole, Organization, OrganizationKind, PartnerRole, Project, ProjectTrade, Template, TradeCategory,
  TradeCategoryMapping, TradeList, TradeListTrade, TradeMappingSource, User, UserPartnerRole, VersionStatus,
  type ConstructionType, type OrganizationAddress, type ProjectOptionalDates, type ProjectScopes,
  type ProjectSiteAddress, type ResponseType,
} from '../modules/entities';
import type { Caller } from '../platform/auth/caller';
import { hashPassword } from '../modules/identity/password';
import { normalizeKey } from '../platform/values/text';

// ---------------------------------------------------------------------------------------------------------
// Identifiers
// ---------------------------------------------------------------------------------------------------------

/** Record kinds, numbered inside demo UUIDs; legacy prefixes for the kinds that carry a legacy id. */
const KINDS = {
  organization: { code: 1, legacy: 'ORG' },
  headquarter: { code: 2, legacy: 'HQS' },
  user: { code: 3, legacy: 'USR' },
  tradeList: { code: 4, legacy: 'TLS' },
  tradeListTrade: { code: 5, legacy: 'TLT' },
  project: { code: 6, legacy: 'PRJ' },
  projectTrade: { code: 7, legacy: 'PTR' },
  template: { code: 8, legacy: 'TPL' },
  contractor: { code: 9, legacy: 'CTR' },
  document: { code: 10, legacy: 'DOC' },
  documentVersion: { code: 11, legacy: null },
  documentFile: { code: 12, legacy: null },
  membership: { code: 13, legacy: null },
  creditLedgerEntry: { code: 14, legacy: null },
  partnerRole: { code: 15, legacy: null },
  userPartnerRole: { code: 16, legacy: null },
  tradeCategory: { code: 17, legacy: null },
  tradeCategoryMapping: { code: 18, legacy: null },
} as const;
type Kind = keyof typeof KINDS;

/** `de000000-0000-4000-8000-KKKKNNNNNNNN`: a valid version-4 UUID naming kind K, record N. */
function demoUuid(kind: Kind, n: number): string {
  return `de000000-0000-4000-8000-${String(KINDS[kind].code).padStart(4, '0')}${String(n).padStart(8, '0')}`;
}

/** UUIDs keyed by trade number ('01', '02', ...), numbered from `base + 1`. */
function numbered(kind: Kind, base: number, count: number): Readonly<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (let i = 1; i <= count; i++) ids[String(i).padStart(2, '0')] = demoUuid(kind, base + i);
  return ids;
}

/** Fixed UUIDs of the demo records. */
export const DEMO_IDS = {
  headquarter: demoUuid('headquarter', 1),
  organizations: {
    atelierDemo: demoUuid('organization', 1),
    atelierNord: demoUuid('organization', 2),
    cabinetSud: demoUuid('organization', 3),
    /** Contractor companies: the two Durand organizations share SIRET 73282932000074. */
    batimentsDurand: demoUuid('organization', 11),
    durandRenovation: demoUuid('organization', 12),
    electriciteMartin: demoUuid('organization', 13),
    charpentesVercors: demoUuid('organization', 14),
    plomberieLefevre: demoUuid('organization', 15),
  },
  users: {
    architect: demoUuid('user', 1),
    other: demoUuid('user', 2),
    member: demoUuid('user', 3),
    noapi: demoUuid('user', 4),
    /** Contacts of the contractor companies (no password, no API access). */
    pierreDurand: demoUuid('user', 11),
    nathalieDurand: demoUuid('user', 12),
    antoineDurand: demoUuid('user', 13),
    lucMartin: demoUuid('user', 14),
    elodieChabert: demoUuid('user', 15),
    thomasLefevre: demoUuid('user', 16),
  },
  tradeLists: {
    /** Public (no organization). */
    standard: demoUuid('tradeList', 1),
    /** Private to Atelier Demo. */
    atelierDemo: demoUuid('tradeList', 2),
    /** Private to Cabinet Sud. */
    cabinetSud: demoUuid('tradeList', 3),
  },
  /** Trades of the trade lists, keyed by trade number. */
  tradeListTrades: {
    standard: numbered('tradeListTrade', 100, 8),
    atelierDemo: numbered('tradeListTrade', 200, 5),
    cabinetSud: numbered('tradeListTrade', 300, 3),
  },
  projects: {
    /** Atelier Demo, public trade list. */
    residence: demoUuid('project', 1),
    /** Atelier Demo, Atelier Demo's private trade list. */
    school: demoUuid('project', 2),
    /** Atelier Demo, archived. */
    archivedHouse: demoUuid('project', 3),
    /** Atelier Nord. */
    nordOffices: demoUuid('project', 4),
    /** Cabinet Sud: architect@demo.test must never see it. */
    cabinetSudHall: demoUuid('project', 5),
  },
  /** Trades of the projects, keyed by trade number (copied from the project's trade list). */
  projectTrades: {
    residence: numbered('projectTrade', 100, 8),
    school: numbered('projectTrade', 200, 5),
    archivedHouse: numbered('projectTrade', 300, 8),
    nordOffices: numbered('projectTrade', 400, 8),
    cabinetSudHall: numbered('projectTrade', 500, 3),
  },
  templates: {
    /** Residence, lot 01: main template, split into the two slices below; selected offer set. */
    residenceGrosOeuvre: demoUuid('template', 1),
    residenceGrosOeuvreTranche1: demoUuid('template', 2),
    /** No answered offer. */
    residenceGrosOeuvreTranche2: demoUuid('template', 3),
    /** Retained offer: the lowest one. */
    residenceCharpente: demoUuid('template', 4),
    residenceElectricite: demoUuid('template', 5),
    /** No answered offer. */
    residencePlomberie: demoUuid('template', 6),
    schoolDemolition: demoUuid('template', 7),
    /** No answered offer. */
    schoolMenuiseries: demoUuid('template', 8),
    archivedHouseGrosOeuvre: demoUuid('template', 9),
    nordOfficesElectricite: demoUuid('template', 10),
    cabinetSudCharpente: demoUuid('template', 11),
  },
  contractors: {
    /** Atelier Demo's directory. */
    batimentsDurand: demoUuid('contractor', 1),
    durandRenovation: demoUuid('contractor', 2),
    electriciteMartin: demoUuid('contractor', 3),
    charpentesVercors: demoUuid('contractor', 4),
    plomberieLefevre: demoUuid('contractor', 5),
    maconneriePetit: demoUuid('contractor', 6),
    btpMoreau: demoUuid('contractor', 7),
    elecServices: demoUuid('contractor', 8),
    sanitairesGirard: demoUuid('contractor', 9),
    menuiserieBernard: demoUuid('contractor', 10),
    /** Atelier Nord's directory. */
    nordElectriciteMartin: demoUuid('contractor', 21),
    nordCourantsLambert: demoUuid('contractor', 22),
    nordElectriciteFlandres: demoUuid('contractor', 23),
    /** Cabinet Sud's directory. */
    sudCharpentesVercors: demoUuid('contractor', 31),
  },
  documents: {
    residenceGoDurand: demoUuid('document', 1),
    residenceGoPetit: demoUuid('document', 2),
    residenceGoMoreau: demoUuid('document', 3),
    residenceGoDurandRenovation: demoUuid('document', 4),
    residenceTranche1Durand: demoUuid('document', 5),
    residenceTranche1Petit: demoUuid('document', 6),
    residenceTranche2Moreau: demoUuid('document', 7),
    residenceTranche2DurandRenovation: demoUuid('document', 8),
    residenceCharpenteVercors: demoUuid('document', 9),
    residenceCharpenteDurand: demoUuid('document', 10),
    residenceCharpenteDurandRenovation: demoUuid('document', 11),
    residenceElecMartin: demoUuid('document', 12),
    residenceElecServices: demoUuid('document', 13),
    residencePlomberieLefevre: demoUuid('document', 14),
    residencePlomberieGirard: demoUuid('document', 15),
    schoolDemolitionPetit: demoUuid('document', 16),
    schoolDemolitionMoreau: demoUuid('document', 17),
    schoolMenuiserieBernard: demoUuid('document', 18),
    schoolMenuiserieDurand: demoUuid('document', 19),
    schoolMenuiserieDurandRenovation: demoUuid('document', 20),
    archivedHouseGoPetit: demoUuid('document', 21),
    nordElecMartin: demoUuid('document', 22),
    nordElecLambert: demoUuid('document', 23),
    nordElecFlandres: demoUuid('document', 24),
    sudCharpenteVercors: demoUuid('document', 25),
  },
  partnerRoles: {
    standard: demoUuid('partnerRole', 1),
    admin: demoUuid('partnerRole', 2),
    viewer: demoUuid('partnerRole', 3),
  },
  tradeCategories: {
    structure: demoUuid('tradeCategory', 1),
    enveloppe: demoUuid('tradeCategory', 2),
    finitions: demoUuid('tradeCategory', 3),
    electricite: demoUuid('tradeCategory', 4),
    fluides: demoUuid('tradeCategory', 5),
    demolition: demoUuid('tradeCategory', 6),
    vrd: demoUuid('tradeCategory', 7),
  },
} as const;

/** The fixed 17-character legacy identifier of a demo record, from its demo UUID ('DEMOORG0000000001'). */
export function demoLegacyId(id: string): string {
  const match = /^de000000-0000-4000-8000-(\d{4})(\d{8})$/.exec(id);
  const kind = match && Object.values(KINDS).find((k) => k.code === Number(match[1]));
  if (!match || !kind?.legacy) throw new Error(`${id} is not the UUID of a demo record with a legacy id`);
  return `DEMO${kind.legacy}${match[2].padStart(10, '0')}`;
}

/** Password of the four demo users. */
export const DEMO_PASSWORD = 'demo-password';

/** Logins of the demo users (decisions.md section 3). */
export const DEMO_USERS = {
  /** Administrator of Atelier Demo (current) and Atelier Nord; admin of headquarter Groupe Demo. */
  architect: 'architect@demo.test',
  /** Administrator of Cabinet Sud only. */
  other: 'other@demo.test',
  /** Plain member (not Administrator) of Atelier Demo. */
  member: 'member@demo.test',
  /** Administrator of Atelier Demo whose API access is not activated. */
  noapi: 'noapi@demo.test',
} as const;

/** The demo architect as loadCaller builds them: for calling the services directly (tests, benchmarks). */
export const DEMO_ARCHITECT_CALLER: Caller = {
  userId: DEMO_IDS.users.architect,
  email: DEMO_USERS.architect,
  adminOrganizationIds: [DEMO_IDS.organizations.atelierDemo, DEMO_IDS.organizations.atelierNord],
  currentOrganizationId: DEMO_IDS.organizations.atelierDemo,
  adminHeadquarterIds: [DEMO_IDS.headquarter],
};

/** The SIRET two contractor organizations share, and another one (internal company lookups). */
export const DEMO_SIRETS = { shared: '73282932000074', single: '55210055400013' } as const;

// ---------------------------------------------------------------------------------------------------------
// Organizations, headquarter, users
// ---------------------------------------------------------------------------------------------------------

const ORG = DEMO_IDS.organizations;
const USR = DEMO_IDS.users;

interface OrganizationSpec {
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

const ORGANIZATIONS: OrganizationSpec[] = [
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

interface UserSpec {
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

const USERS: UserSpec[] = [
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

const TRADE_CATEGORIES: Array<{ id: string; code: string; name: string }> = [
  { id: CAT.structure, code: 'STRUCTURE', name: 'Gros œuvre et structure' },
  { id: CAT.enveloppe, code: 'ENVELOPPE', name: 'Clos et couvert' },
  { id: CAT.finitions, code: 'FINITIONS', name: 'Second œuvre et finitions' },
  { id: CAT.electricite, code: 'ELECTRICITE', name: 'Électricité courants forts et faibles' },
  { id: CAT.fluides, code: 'FLUIDES', name: 'Plomberie, chauffage et ventilation' },
  { id: CAT.demolition, code: 'DEMOLITION', name: 'Démolition et désamiantage' },
  { id: CAT.vrd, code: 'VRD', name: 'Voirie et réseaux divers' },
];

/** Partner-platform trade ids and their categories. */
const PARTNER_TRADE_CATEGORIES: Array<[key: string, categories: string[]]> = [
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

interface TradeListSpec {
  id: string;
  name: string;
  organization: string | null;
  tradeIds: Readonly<Record<string, string>>;
  trades: TradeSpec[];
  createdAt: string;
}

const TRADE_LISTS: TradeListSpec[] = [
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

const PARTNER_ROLES: Array<{ id: string; code: string; name: string; isStandard: boolean }> = [
  { id: DEMO_IDS.partnerRoles.standard, code: 'PARTNER_STANDARD', name: 'Utilisateur partenaire', isStandard: true },
  { id: DEMO_IDS.partnerRoles.admin, code: 'PARTNER_ADMIN', name: 'Administrateur partenaire', isStandard: false },
  { id: DEMO_IDS.partnerRoles.viewer, code: 'PARTNER_VIEWER', name: 'Lecteur partenaire', isStandard: false },
];

/** Partner roles currently held: [user, role]. */
const USER_PARTNER_ROLES: Array<[user: string, role: string]> = [[USR.architect, DEMO_IDS.partnerRoles.viewer]];

// ---------------------------------------------------------------------------------------------------------
// Contractor directories
// ---------------------------------------------------------------------------------------------------------

const CTR = DEMO_IDS.contractors;

interface ContractorSpec {
  id: string;
  organization: string;
  name: string;
  email: string;
  phone: string | null;
  company: string | null;
  fiscalNumber: string | null;
}

const CONTRACTORS: ContractorSpec[] = [
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
const { ANSWERED, IN_REVISION, DECLINED, DRAFT } = VersionStatus;
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

interface DocumentSpec {
  id: string;
  contractor: string;
  intention: Intention | null;
  invitedAt: string;
  dceDownloadedAt: string | null;
  versions: VersionSpec[];
}

interface TemplateSpec {
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

interface ProjectSpec {
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

const PROJECTS: ProjectSpec[] = [
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
        sentAt: v.status === DRAFT ? null : new Date(v.at), ...stamp(v.at),
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
