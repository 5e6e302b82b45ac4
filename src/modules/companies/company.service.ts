import { uuidArraySql } from '../../platform/database/uuid';
import { Membership } from '../organizations/membership.entity';
import { Organization } from '../organizations/organization.entity';
import { ownedBy } from '../../platform/database/tenancy';
import { NotFoundError, ValidationError } from '../../platform/errors/errors';
import type { ServiceContext } from '../../platform/service-context';

interface CompanyContactView {
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  mobile: string | null;
}

export interface CompanyContactsView {
  siret: string;
  companies: { id: string; name: string; contacts: CompanyContactView[] }[];
}

export interface CompanyTradesView {
  siret: string;
  companies: { id: string; name: string; businessSectors: string[]; trades: { id: string; name: string }[] }[];
}

const SIRET = /^\d{14}$/;

/**
 * Contractor companies (organizations of kind CONTRACTOR) found by SIRET, for internal consumers (#33, #34).
 * A company and its contacts are the company's own data, not an architect organization's: every caller
 * sees them. What architect organizations did with a company (its trades) is limited to the caller's.
 */
export class CompanyService {
  constructor(private readonly sc: ServiceContext) {}

  /**
   * The companies with this SIRET linked from the caller's directory; 400 when it is not 14 digits, 404 (with
   * the lookup's body) when none, exactly as for a SIRET no company has.
   */
  private async companies(siret: string): Promise<Organization[]> {
    if (!SIRET.test(siret)) {
      throw new ValidationError([{ field: 'siret', message: 'must be 14 digits' }], 'The SIRET must be 14 digits');
    }
    // A company shows only to callers whose own directory links to it: its contacts are another
    // organization's data, seen through the caller's business relation, never by SIRET alone.
    const linked = await this.sc.em.getConnection().execute<{ id: string }[]>(`
      select o.id from organization o
      where o.kind = 'CONTRACTOR' and o.fiscal_number = ?
        and exists (select 1 from contractor c where c.company_id = o.id and ${ownedBy('c.organization_id', this.sc.caller.adminOrganizationIds)})`,
    [siret]);
    const companies = linked.length
      ? await this.sc.em.find(Organization, { id: { $in: linked.map((r) => r.id) } }, { orderBy: { name: 'asc', id: 'asc' } })
      : [];
    if (!companies.length) throw new NotFoundError('No contractor organization has this SIRET', { siret, data: [] });
    return companies;
  }

  /** #33: the users of every contractor organization with that SIRET, as contacts. */
  async contacts(siret: string): Promise<CompanyContactsView> {
    const companies = await this.companies(siret);
    const memberships = await this.sc.em.find(Membership, { organization: { $in: companies.map((c) => c.id) } }, {
      populate: ['user'],
      orderBy: { user: { lastName: 'asc', firstName: 'asc', email: 'asc' } },
    });
    return {
      siret,
      companies: companies.map((c) => ({
        id: c.id,
        name: c.name,
        contacts: memberships.filter((m) => m.organization.id === c.id).map(({ user: u }) => ({
          firstName: u.firstName,
          lastName: u.lastName,
          email: u.email,
          phone: u.phone,
          mobile: u.mobile ?? null,
        })),
      })),
    };
  }

  /**
   * #34: business sectors of each company, and the trades it was consulted on: the project trades of
   * templates where a directory entry linked to the company holds a document, in the caller's
   * organizations' projects only.
   */
  async trades(siret: string): Promise<CompanyTradesView> {
    const companies = await this.companies(siret);
    const rows = await this.sc.em.execute<{ company_id: string; id: string; name: string }[]>(`
      select distinct c.company_id, pt.id, pt.name
      from contractor c
      join document d on d.contractor_id = c.id
      join template t on t.id = d.template_id
      join project_trade pt on pt.id = t.trade_id
      join project p on p.id = pt.project_id
      where c.company_id = any(${uuidArraySql(companies.map((c) => c.id))}) and ${ownedBy('p.organization_id', this.sc.caller.adminOrganizationIds)}
      order by pt.name, pt.id`);
    return {
      siret,
      companies: companies.map((c) => ({
        id: c.id,
        name: c.name,
        businessSectors: [...c.businessSectors],
        trades: rows.filter((r) => r.company_id === c.id).map((r) => ({ id: r.id, name: r.name })),
      })),
    };
  }
}
