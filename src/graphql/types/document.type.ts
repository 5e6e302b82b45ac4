import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { DocumentStateEnum, IntentionEnum, VersionStatusEnum } from '../../services/inputs/enums';

@ObjectType({ description: 'A version of a contractor\'s priced answer', simpleResolvers: true })
export class DocumentVersion {
  @Field(() => ID) id!: string;
  @Field(() => Int) version!: number;
  @Field(() => Float) subTotal!: number;
  @Field(() => Float) discount!: number;
  @Field(() => VersionStatusEnum) status!: string;
  @Field(() => Date, { nullable: true, description: 'null for a draft' }) sentAt!: Date | null;
  @Field() isMandate!: boolean;
  @Field() hasFiles!: boolean;
  @Field() hasDpgf!: boolean;
}

/** One invited contractor on a template; `contractor` and `versions` resolve through DataLoaders. */
@ObjectType({ simpleResolvers: true })
export class Document {
  @Field(() => ID) id!: string;
  @Field(() => IntentionEnum, { nullable: true, description: 'null until the contractor tells' }) intention!: string | null;
  @Field(() => DocumentStateEnum) state!: string;
  @Field(() => Date, { nullable: true }) dceDownloadedAt!: Date | null;
}
