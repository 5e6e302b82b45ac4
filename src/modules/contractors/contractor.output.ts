import { Field, ID, ObjectType } from 'type-graphql';
import { DEMO_IDS } from '../examples';
import { CompanyInformation } from '../organizations/organization.output';
import { Rest, RestRecord } from '../../platform/outputs/output';

@ObjectType({ description: 'An entry of an organization\'s contractor directory', simpleResolvers: true })
@RestRecord({ description: 'An entry of an organization\'s contractor directory' })
export class Contractor {
  @Field(() => ID) @Rest({ example: DEMO_IDS.contractors.batimentsDurand }) id!: string;
  @Field() @Rest({ example: 'Bâtiments Durand SAS' }) name!: string;
  @Field() @Rest({ example: 'p.durand@batiments-durand.fr' }) email!: string;
  @Field(() => String, { nullable: true }) @Rest({ example: '04 78 58 12 30' }) phone!: string | null;
  @Field(() => CompanyInformation) information!: CompanyInformation;
  @Field(() => ID, { nullable: true, description: 'The contractor company the entry is linked to' }) @Rest({ example: DEMO_IDS.organizations.batimentsDurand }) companyId!: string | null;
  @Field(() => Date) @Rest({ example: '2026-02-01T09:00:00.000000Z' }) createdAt!: Date;
  @Field(() => Date) @Rest({ example: '2026-02-01T09:00:00.000000Z' }) updatedAt!: Date;
}
