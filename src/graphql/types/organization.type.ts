import { Field, ID, ObjectType } from 'type-graphql';

/** Company identifiers, shared by organizations and directory contractors. */
@ObjectType({ simpleResolvers: true })
export class CompanyInformation {
  @Field(() => String, { nullable: true, description: 'SIRET, or the country\'s equivalent' })
  fiscalNumber!: string | null;
}

@ObjectType({ simpleResolvers: true })
export class Address {
  @Field() number!: string;
  @Field() address!: string;
  @Field() zipCode!: string;
  @Field() city!: string;
  @Field({ description: 'lowercase two-letter country code' }) country!: string;
}

/**
 * A person, wherever they appear: the caller (`me`), a project's manager, a user of an organization. One type
 * keyed by `id`, so a normalized cache holds one record per person. The fields about the caller's session are
 * resolved only on the caller and are null on anyone else.
 */
@ObjectType({ description: 'A person: the caller, a project manager, a user of an organization. Fields marked "caller only" are null on any other user.', simpleResolvers: true })
export class User {
  @Field(() => ID) id!: string;
  @Field() firstName!: string;
  @Field() lastName!: string;
  @Field() email!: string;
  @Field() phone!: string;
  @Field(() => String, { nullable: true }) mobile!: string | null;
  @Field() isRegistered!: boolean;
}

@ObjectType({ simpleResolvers: true })
export class Organization {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => CompanyInformation) information!: CompanyInformation;
  @Field(() => [Address]) addresses!: Address[];
  @Field(() => [User], { description: 'Members of the organization, by last name' }) users!: User[];
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
