/**
 * The identifiers the API's examples name (OpenAPI examples of outputs and routes): the demo data's (decisions.md
 * section 3: fixed UUIDs, fixed 17-character legacy identifiers, the demo logins), so that every example of the
 * published document can be tried as it is against `npm start`'s demo data. Here rather than in seed/, so that the
 * API's records do not load the demo loader's module graph; seed/demo-ids.ts re-exports them for the demo data and
 * the tests.
 */

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
export type Kind = keyof typeof KINDS;

/** `de000000-0000-4000-8000-KKKKNNNNNNNN`: a valid version-4 UUID naming kind K, record N. */
export function demoUuid(kind: Kind, n: number): string {
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

/** The SIRET two contractor organizations share, and another one (internal company lookups). */
export const DEMO_SIRETS = { shared: '73282932000074', single: '55210055400013' } as const;

