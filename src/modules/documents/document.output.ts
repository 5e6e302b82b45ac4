import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { DEMO_IDS } from '../examples';
import { DocumentStateEnum, IntentionEnum, VersionStatusEnum } from '../enums';
import { CompanyInformation } from '../organizations/organization.output';
import { NotInRest, Rest, RestRecord } from '../../platform/outputs/output';

/** The invited contractor of a REST document, from the organization's directory. */
@RestRecord({ description: 'The contractor a document was sent to' })
export class DocumentContractor {
  @Rest(() => ID, { example: DEMO_IDS.contractors.batimentsDurand }) id!: string;
  @Rest(() => String, { example: 'Bâtiments Durand SAS' }) name!: string;
  @Rest(() => CompanyInformation) information!: CompanyInformation;
  @Rest(() => String, { example: 'p.durand@batiments-durand.fr' }) email!: string;
}

@ObjectType({ description: 'A version of a contractor\'s priced answer', simpleResolvers: true })
export class DocumentVersion {
  @Field(() => ID) @NotInRest() id!: string;
  @Field(() => Int) @Rest({ example: 1 }) version!: number;
  @Field(() => Float) @Rest({ example: 118000 }) subTotal!: number;
  @Field(() => Float) @Rest({ example: 1500 }) discount!: number;
  @Field(() => VersionStatusEnum) @Rest({ example: 'ANSWERED' }) status!: string;
  @Field(() => Date, { nullable: true, description: 'null for a draft' }) @Rest({ example: '2026-10-06T16:20:00.000000Z' }) sentAt!: Date | null;
  // The interface gives it as a string holding a boolean word.
  @Field() @Rest(() => String, { schema: { enum: ['true', 'false'] }, example: 'false' }) isMandate!: boolean;
  @Field() hasFiles!: boolean;
  @Field() hasDpgf!: boolean;
}

/** One invited contractor on a template; `contractor` and `versions` resolve through DataLoaders. */
@ObjectType({ simpleResolvers: true })
@RestRecord({ description: 'A contractor invited to a template, with the versions of their answer' })
export class Document {
  @Field(() => ID) @Rest({ example: DEMO_IDS.documents.residenceGoDurand }) id!: string;
  @Rest(() => DocumentContractor) contractor!: DocumentContractor;
  @Field(() => IntentionEnum, { nullable: true, description: 'null until the contractor tells' }) @Rest({ example: 'YES' }) intention!: string | null;
  @Field(() => DocumentStateEnum) @Rest({ example: 'ANSWERED' }) state!: string;
  @Field(() => Date, { nullable: true }) @Rest({ description: 'When the consultation file was downloaded', example: '2026-09-15T10:12:00.000000Z' }) dceDownloadedAt!: Date | null;
  @Rest(() => [DocumentVersion]) versions!: DocumentVersion[];
}

@RestRecord({ description: 'A file of a document version' })
export class VersionFile {
  @Rest(() => String, { example: 'DPGF-lot-01.pdf' }) name!: string;
  @Rest(() => Int, { description: 'Bytes', schema: { minimum: 0 }, example: 98 }) size!: number;
}

/** #16 without a version. */
@RestRecord({ description: 'A version of a document and its files' })
export class VersionFiles {
  @Rest(() => Int, { schema: { minimum: 1 }, example: 1 }) version!: number;
  @Rest(() => VersionStatusEnum, { example: 'ANSWERED' }) status!: string;
  @Rest(() => Date, { nullable: true, description: 'null for a draft', example: '2026-10-06T16:20:00.000000Z' }) sentAt!: Date | null;
  @Rest(() => [VersionFile]) files!: VersionFile[];
}

/** #16 with a version. */
@RestRecord({ description: 'A signed download URL of a file, served by the service at /files/{fileId}' })
export class FileDownload {
  @Rest(() => String, { example: 'DPGF-lot-01.pdf' }) name!: string;
  @Rest(() => String, { schema: { format: 'uri' }, example: 'https://tender.example/files/de000000-0000-4000-8000-001200000001?expires=1795410864&signature=Z4LgVu9AD9iFY6ziUfjvcSlMftXiYuFC27RThjI8coI' }) url!: string;
  @Rest(() => Date, { description: 'The URL stops working 15 minutes after it was given', example: '2026-11-23T05:14:24.000000Z' }) expiresAt!: Date;
}
