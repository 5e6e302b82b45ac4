import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType()
export class OrganizationInformation {
  @Field(() => String, { nullable: true })
  fiscalNumber!: string | null;
}

@ObjectType()
export class Address {
  @Field() number!: string;
  @Field() address!: string;
  @Field() zipCode!: string;
  @Field() city!: string;
  @Field({ description: 'lowercase two-letter country code' }) country!: string;
}

@ObjectType()
export class OrganizationUser {
  @Field(() => ID) id!: string;
  @Field() firstName!: string;
  @Field() lastName!: string;
  @Field() phone!: string;
  @Field(() => String, { nullable: true }) mobile!: string | null;
  @Field() email!: string;
  @Field() isRegistered!: boolean;
}

@ObjectType()
export class Organization {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => OrganizationInformation) information!: OrganizationInformation;
  @Field(() => [Address]) addresses!: Address[];
  @Field(() => [OrganizationUser]) users!: OrganizationUser[];
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType({ description: 'The authenticated caller' })
export class Me {
  @Field(() => ID) id!: string;
  @Field() email!: string;
  @Field(() => ID) currentOrganizationId!: string;
  @Field(() => [ID], { description: 'Organizations where the caller is Administrator' }) organizationIds!: string[];
}
