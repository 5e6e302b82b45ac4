import { Contractor } from '../entities';
import { NotFoundError } from '../errors';
import type { ServiceContext } from './service-context';

/** An entry of an architect organization's contractor directory (#22). */
export interface ContractorDetailView {
  id: string;
  name: string;
  email: string;
  phone: string | null;
  information: { fiscalNumber: string | null };
  /** The contractor company (organization of kind CONTRACTOR) this entry is linked to. */
  companyId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const contractorDetailView = (c: Contractor): ContractorDetailView => ({
  id: c.id,
  name: c.name,
  email: c.email,
  phone: c.phone ?? null,
  information: { fiscalNumber: c.fiscalNumber ?? null },
  companyId: c.company?.id ?? null,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

/** The contractor directory of the caller's current organization. */
export class ContractorService {
  constructor(private readonly sc: ServiceContext) {}

  /** #22: an entry of the current organization's directory; any other one is not found. */
  async get(contractorId: string): Promise<ContractorDetailView> {
    const contractor = await this.sc.em.findOne(Contractor, {
      id: contractorId.toLowerCase(),
      organization: this.sc.caller.currentOrganizationId,
    });
    if (!contractor) throw new NotFoundError('Contractor not found');
    return contractorDetailView(contractor);
  }
}
