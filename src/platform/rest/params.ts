import { Matches } from 'class-validator';
import { Required, Text, Uuid } from '../validation/rules';

// Path parameters of the REST operations: validated like any input, so a malformed id is a 400.

export class ProjectParams {
  @Required() @Uuid()
  projectId!: string;
}

export class ProjectTradeParams extends ProjectParams {
  @Required() @Uuid()
  tradeId!: string;
}

export class TemplateParams extends ProjectParams {
  @Required() @Uuid()
  templateId!: string;
}

export class DocumentParams extends TemplateParams {
  @Required() @Uuid()
  documentId!: string;
}

export class DocumentVersionParams extends DocumentParams {
  /** A path segment, hence a string. */
  @Required() @Matches(/^[1-9]\d*$/, { message: 'must be a positive whole number' })
  version!: string;
}

export class OrganizationParams {
  @Required() @Uuid()
  organizationId!: string;
}

export class UserParams {
  @Required() @Uuid()
  userId!: string;
}

export class ContractorParams {
  @Required() @Uuid()
  contractorId!: string;
}

export class TradeListParams {
  @Required() @Uuid()
  tradeListId!: string;
}

export class TradeIdParams {
  @Required() @Text()
  tradeId!: string;
}

export class TradeNameParams {
  @Required() @Text()
  tradeName!: string;
}
