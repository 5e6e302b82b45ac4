import { Field, ID, ObjectType } from 'type-graphql';
import { DEMO_IDS, DEMO_USERS } from '../examples';
import { Rest, RestRecord } from '../../platform/outputs/output';

/** Company identifiers, shared by organizations and directory contractors. */
@ObjectType({ simpleResolvers: true })
export class CompanyInformation {
  @Field(() => String, { nullable: true, description: 'SIRET, or the country\'s equivalent' }) @Rest({ example: '73282932000074' })
  fiscalNumber!: string | null;
}

@ObjectType({ simpleResolvers: true })
export class Address {
  @Field() @Rest({ example: '12' }) number!: string;
  @Field() @Rest({ example: 'rue de la République' }) address!: string;
  @Field() @Rest({ example: '69002' }) zipCode!: string;
  @Field() @Rest({ example: 'Lyon' }) city!: string;
  @Field({ description: 'lowercase two-letter country code' }) @Rest({ schema: { pattern: '^[a-z]{2}$' }, example: 'fr' }) country!: string;
}

/**
 * A person, wherever they appear: the caller (`me`), a project's manager, a user of an organization. One type
 * keyed by `id`, so a normalized cache holds one record per person. The fields about the caller's session are
 * resolved only on the caller and are null on anyone else.
 */
@ObjectType({ description: 'A person: the caller, a project manager, a user of an organization. Fields marked "caller only" are null on any other user.', simpleResolvers: true })
@RestRecord({ description: 'A user of an organization; `id` is the `sub` of their tokens' })
export class User {
  @Field(() => ID) @Rest({ example: DEMO_IDS.users.architect }) id!: string;
  @Field() @Rest({ example: 'Claire' }) firstName!: string;
  @Field() @Rest({ example: 'Dubois' }) lastName!: string;
  @Field() @Rest({ example: DEMO_USERS.architect }) email!: string;
  @Field() @Rest({ example: '04 72 10 20 30' }) phone!: string;
  @Field(() => String, { nullable: true }) @Rest({ example: '06 12 34 56 78' }) mobile!: string | null;
  @Field() isRegistered!: boolean;
}

@ObjectType({ simpleResolvers: true })
@RestRecord({ description: 'An architect organization with its addresses and users' })
export class Organization {
  @Field(() => ID) @Rest({ example: DEMO_IDS.organizations.atelierDemo }) id!: string;
  @Field() @Rest({ example: 'Atelier Demo' }) name!: string;
  @Field(() => CompanyInformation) information!: CompanyInformation;
  @Field(() => [Address]) addresses!: Address[];
  @Field(() => [User], { description: 'Members of the organization, by last name' }) users!: User[];
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

/** #18: a user, and which of the caller's organizations they belong to. */
@RestRecord({ description: 'A user of the caller\'s organizations' })
export class OrganizationUser extends User {
  @Rest(() => [ID], { description: 'The caller\'s organizations the user belongs to', example: [DEMO_IDS.organizations.atelierDemo, DEMO_IDS.organizations.atelierNord] })
  organizationIds!: string[];
}

@RestRecord({ description: 'An organization of a headquarter' })
export class HeadquarterOrganization {
  @Rest(() => ID, { example: DEMO_IDS.organizations.atelierDemo }) id!: string;
  @Rest(() => String, { example: 'Atelier Demo' }) name!: string;
}

/** #21 */
@RestRecord({ description: 'A group of organizations (headquarter)' })
export class Headquarter {
  @Rest(() => ID, { example: DEMO_IDS.headquarter }) id!: string;
  @Rest(() => String, { example: 'Groupe Demo' }) name!: string;
  @Rest(() => [HeadquarterOrganization]) organizations!: HeadquarterOrganization[];
  @Rest(() => Date, { example: '2026-01-05T08:30:00.000000Z' }) createdAt!: Date;
  @Rest(() => Date, { example: '2026-01-05T08:30:00.000000Z' }) updatedAt!: Date;
}
