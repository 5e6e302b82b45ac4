import { Field, Float, ID, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class ContractorInformation {
  @Field(() => String, { nullable: true }) fiscalNumber!: string | null;
}

@ObjectType()
export class Contractor {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() email!: string;
  @Field(() => String, { nullable: true }) phone!: string | null;
  @Field(() => ContractorInformation) information!: ContractorInformation;
}

@ObjectType()
export class DocumentVersion {
  @Field(() => Int) version!: number;
  @Field(() => Float) subTotal!: number;
  @Field(() => Float) discount!: number;
  @Field({ description: 'DRAFT, ANSWERED, IN_REVISION or DECLINED' }) status!: string;
  @Field(() => Date, { nullable: true, description: 'null for a draft' }) sentAt!: Date | null;
  @Field() isMandate!: boolean;
  @Field() hasFiles!: boolean;
  @Field() hasDpgf!: boolean;
}

/** One invited contractor on a template; `contractor` and `versions` resolve through DataLoaders. */
@ObjectType()
export class Document {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true, description: 'YES, NO, MAYBE or null' }) intention!: string | null;
  @Field({ description: 'Status of the latest version; PENDING when none (or a draft)' }) state!: string;
  @Field(() => Date, { nullable: true }) dceDownloadedAt!: Date | null;
}
