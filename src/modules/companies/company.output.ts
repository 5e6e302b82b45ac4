import { ID } from 'type-graphql';
import { DEMO_IDS, DEMO_SIRETS } from '../examples';
import { Rest, RestRecord } from '../../platform/outputs/output';

// Internal operations (REST only): contractor companies found by SIRET (#33, #34), trade categories (#29-#31).

const SIRET = { pattern: '^\\d{14}$' };

@RestRecord({ description: 'A user of a contractor company, as a contact' })
export class CompanyContact {
  @Rest(() => String, { example: 'Pierre' }) firstName!: string;
  @Rest(() => String, { example: 'Durand' }) lastName!: string;
  @Rest(() => String, { example: 'p.durand@batiments-durand.fr' }) email!: string;
  @Rest(() => String, { example: '04 78 58 12 30' }) phone!: string;
  @Rest(() => String, { nullable: true, example: '06 72 45 18 90' }) mobile!: string | null;
}

@RestRecord({ description: 'A contractor company and its contacts' })
export class CompanyWithContacts {
  @Rest(() => ID, { example: DEMO_IDS.organizations.batimentsDurand }) id!: string;
  @Rest(() => String, { example: 'Bâtiments Durand SAS' }) name!: string;
  @Rest(() => [CompanyContact]) contacts!: CompanyContact[];
}

@RestRecord({ description: 'Contacts result: every contractor company with the SIRET' })
export class CompanyContacts {
  @Rest(() => String, { schema: SIRET, example: DEMO_SIRETS.shared }) siret!: string;
  @Rest(() => [CompanyWithContacts]) companies!: CompanyWithContacts[];
}

@RestRecord({ description: 'A trade of the caller\'s projects a company was consulted on' })
export class CompanyTrade {
  @Rest(() => ID, { example: DEMO_IDS.projectTrades.residence['01'] }) id!: string;
  @Rest(() => String, { example: 'Gros œuvre' }) name!: string;
}

@RestRecord({ description: 'A contractor company, its business sectors and trades' })
export class CompanyWithTrades {
  @Rest(() => ID, { example: DEMO_IDS.organizations.batimentsDurand }) id!: string;
  @Rest(() => String, { example: 'Bâtiments Durand SAS' }) name!: string;
  @Rest(() => [String], { example: ['Construction', 'Gros œuvre', 'Maçonnerie'] }) businessSectors!: string[];
  @Rest(() => [CompanyTrade]) trades!: CompanyTrade[];
}

@RestRecord({ description: 'Trades result: every contractor company with the SIRET' })
export class CompanyTrades {
  @Rest(() => String, { schema: SIRET, example: DEMO_SIRETS.shared }) siret!: string;
  @Rest(() => [CompanyWithTrades]) companies!: CompanyWithTrades[];
}

@RestRecord({ description: 'A trade category' })
export class TradeCategory {
  @Rest(() => ID, { example: DEMO_IDS.tradeCategories.structure }) id!: string;
  @Rest(() => String, { example: 'STRUCTURE' }) code!: string;
  @Rest(() => String, { example: 'Gros œuvre et structure' }) name!: string;
}
