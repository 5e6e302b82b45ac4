import { IsString } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { ValidationError, type FieldError } from '../../platform/errors/errors';
import { List, Optional, Required, Uuid } from '../../platform/validation/rules';
import { isUuid } from '../../platform/database/uuid';

/** Length of a legacy identifier (interface.md, Limits). */
export const LEGACY_ID_LENGTH = 17;
/** Length of a UUID in uuids-to-ids (interface.md, Limits). */
const UUID_LENGTH = 36;


// class-validator names a failing array by its property only; the item rules below are checked by
// checkResourceLists, which names each failing identifier by its path (`resources.0.1`).

/** Body of ids-to-uuids (#25): lists of 17-character legacy identifiers. */
export class IdsToUuidsInput {
  @Optional() @List()
  @JSONSchema({
    description: 'Lists of legacy identifiers; the answer keeps this nesting',
    items: { type: 'array', items: { type: 'string', minLength: LEGACY_ID_LENGTH, maxLength: LEGACY_ID_LENGTH } },
  })
  resources?: unknown[] | null;
}

/** Body of uuids-to-ids (#32): lists of UUIDs. */
export class UuidsToIdsInput {
  @Optional() @List()
  @JSONSchema({
    description: 'Lists of UUIDs; the answer keeps this nesting',
    items: { type: 'array', items: { type: 'string', format: 'uuid', minLength: UUID_LENGTH, maxLength: UUID_LENGTH } },
  })
  resources?: unknown[] | null;
}

export type IdentifierKind = 'legacy' | 'uuid';

function identifierError(value: unknown, kind: IdentifierKind): string | null {
  if (typeof value !== 'string') return 'must be a string';
  const length = kind === 'legacy' ? LEGACY_ID_LENGTH : UUID_LENGTH;
  if (value.length !== length) return `must be ${length} characters long`;
  if (kind === 'uuid' && !isUuid(value)) return 'must be a UUID';
  return null;
}

/** The validated lists of identifiers of a conversion body; throws ValidationError naming `resources.i.j`. */
export function checkResourceLists(resources: unknown[] | null | undefined, kind: IdentifierKind): string[][] {
  if (!resources) return [];
  const errors: FieldError[] = [];
  resources.forEach((list, i) => {
    if (!Array.isArray(list)) {
      errors.push({ field: `resources.${i}`, message: 'must be an array' });
      return;
    }
    list.forEach((value: unknown, j) => {
      const message = identifierError(value, kind);
      if (message) errors.push({ field: `resources.${i}.${j}`, message });
    });
  });
  if (errors.length) throw new ValidationError(errors);
  return resources as string[][];
}

/** Path of #33/#34: the SIRET is checked by the service, whose 400 names the 14-digit rule in its message. */
export class CompanySiretParams {
  @Required() @IsString({ message: 'must be a string' })
  @JSONSchema({ type: 'string', pattern: '^\\d{14}$', description: 'SIRET, 14 digits' })
  siret!: string;
}

/** Path of #30: a service trade identifier, the UUID of a trade-list trade. */
export class ServiceTradeParams {
  @Required() @Uuid()
  tradeId!: string;
}
