import { registerEnumType } from 'type-graphql';
import { VersionStatus } from './documents/document-version.entity';
import { Intention } from './documents/document.entity';
import { CONSTRUCTION_TYPES, CURRENCIES, RESPONSE_TYPES } from './projects/project.entity';

/**
 * The closed sets of decisions.md as GraphQL enums, each value named as the interface writes it, so a
 * GraphQL value is the REST value. Inputs and output types both use them: GraphQL refuses any other value
 * before a resolver runs, and generated client types are unions instead of `string`. REST validates the same
 * input fields with `OneOf` against the same lists.
 */
function closedSet<T extends string>(name: string, values: readonly T[], description: string): Record<T, T> {
  const enumObject = Object.fromEntries(values.map((v) => [v, v])) as Record<T, T>;
  registerEnumType(enumObject, { name, description });
  return enumObject;
}

const DOCUMENT_STATES = ['PENDING', 'ANSWERED', 'IN_REVISION', 'DECLINED'] as const;
const CREDITS_SCOPE_TYPES = ['organization', 'headquarter'] as const;

export const ConstructionTypeEnum = closedSet('ConstructionType', CONSTRUCTION_TYPES, 'Kind of construction of a project');
export const ResponseTypeEnum = closedSet('ResponseType', RESPONSE_TYPES, 'What contractors answer with');
export const CurrencyEnum = closedSet('Currency', CURRENCIES, 'ISO 4217 currency of a project');
export const DocumentStateEnum = closedSet('DocumentState', DOCUMENT_STATES, 'Status of a document\'s latest version; PENDING when it has none, or a draft');
export const VersionStatusEnum = closedSet('VersionStatus', Object.values(VersionStatus), 'Status of a version of a contractor\'s answer');
export const IntentionEnum = closedSet('Intention', Object.values(Intention), 'Whether a contractor intends to answer');
export const CreditsScopeTypeEnum = closedSet('CreditsScopeType', CREDITS_SCOPE_TYPES, 'What a credits usage report covers');
