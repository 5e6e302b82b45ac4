import type { Time } from '../../platform/values/time';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../../platform/database/tenancy';
import { NotFoundError } from '../../platform/errors/errors';
import { rowTime } from '../../platform/database/rows';
import { isUuid, uuidArraySql } from '../../platform/database/uuid';
import type { ServiceContext } from '../../platform/service-context';

/** An entry of an architect organization's contractor directory (#22). */
export interface ContractorDetailView {
  id: string;
  name: string;
  email: string;
  phone: string | null;
  information: { fiscalNumber: string | null };
  /** The contractor company (organization of kind CONTRACTOR) this entry is linked to. */
  companyId: string | null;
  createdAt: Time;
  updatedAt: Time;
}

interface ContractorRow {
  id: string;
  name: string;
  email: string;
  phone: string | null;
  fiscal_number: string | null;
  company_id: string | null;
  created_at: string | Date;
  updated_at: string | Date;
}

const CONTRACTOR_COLUMNS = 'c.id, c.name, c.email, c.phone, c.fiscal_number, c.company_id, c.created_at, c.updated_at';

function contractorFromRow(em: EntityManager, c: ContractorRow): ContractorDetailView {
  return {
    id: c.id,
    name: c.name,
    email: c.email,
    phone: c.phone,
    information: { fiscalNumber: c.fiscal_number },
    companyId: c.company_id,
    createdAt: rowTime(c.created_at),
    updatedAt: rowTime(c.updated_at),
  };
}

/** Directory entries of some organizations whose id meets `idCondition`, in one statement (reads: rows, no entities). */
async function contractorsWhere(em: EntityManager, idCondition: string, organizationIds: string[]): Promise<ContractorDetailView[]> {
  const rows = await em.execute<ContractorRow[]>(`
    select ${CONTRACTOR_COLUMNS}
    from contractor c
    where ${idCondition} and ${ownedBy('c.organization_id', organizationIds)}`);
  return rows.map((c) => contractorFromRow(em, c));
}

/** Directory entries of some organizations by id. */
export async function contractorsByIds(em: EntityManager, ids: string[], organizationIds: string[]): Promise<ContractorDetailView[]> {
  if (!ids.length || !organizationIds.length) return [];
  return contractorsWhere(em, `c.id = any(${uuidArraySql(ids)})`, organizationIds);
}

/**
 * Directory entries of some organizations among the ids a subquery selects (`idsSql`, one column of contractor
 * ids), in one statement: how a module that names contractors (a project's documents) reads them without first
 * reading its own rows.
 */
export async function contractorsAmong(em: EntityManager, idsSql: string, organizationIds: string[]): Promise<ContractorDetailView[]> {
  if (!organizationIds.length) return [];
  return contractorsWhere(em, `c.id in (${idsSql})`, organizationIds);
}

/** The contractor directory of the caller's current organization. */
export class ContractorService {
  constructor(private readonly sc: ServiceContext) {}

  /** #22: an entry of the current organization's directory; any other one is not found. */
  async get(contractorId: string): Promise<ContractorDetailView> {
    const [contractor] = isUuid(contractorId)
      ? await contractorsByIds(this.sc.em, [contractorId.toLowerCase()], [this.sc.caller.currentOrganizationId.toLowerCase()])
      : [];
    if (!contractor) throw new NotFoundError('Contractor not found');
    return contractor;
  }
}
