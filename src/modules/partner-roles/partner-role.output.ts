import { ID } from 'type-graphql';
import { DEMO_IDS } from '../examples';
import { Rest, RestRecord } from '../../platform/outputs/output';

/** #26-#27 (REST only). */
@RestRecord({ description: 'A partner-platform role held by a user' })
export class PartnerRole {
  @Rest(() => ID, { example: DEMO_IDS.partnerRoles.viewer }) id!: string;
  @Rest(() => String, { example: 'PARTNER_VIEWER' }) code!: string;
  @Rest(() => String, { example: 'Lecteur partenaire' }) name!: string;
  @Rest(() => Date, { description: 'When the role was given to the user', example: '2026-03-02T10:00:00.000000Z' }) assignedAt!: Date;
}
