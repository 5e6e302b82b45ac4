import type { Time } from '../../platform/values/time';
import { inOrganizations, ownedBy } from '../../platform/database/tenancy';
import { rowTime, type PgTimestamp } from '../../platform/database/rows';
import { uuidList } from '../../platform/database/uuid';
import { NotFoundError } from '../../platform/errors/errors';
import { Headquarter } from './headquarter.entity';
import { Membership } from './membership.entity';
import { Organization, OrganizationKind, type OrganizationAddress } from './organization.entity';
import { User } from './user.entity';
import { canSeeOrganization } from '../access';
import type { ServiceContext } from '../../platform/service-context';

/** A user as the organizations that hold them show them (the same fields wherever a user appears). */
export interface UserView {
  id: string;
  firstName: string;
  lastName: string;
  phone: string;
  mobile: string | null;
  email: string;
  isRegistered: boolean;
}

export interface OrganizationView {
  id: string;
  name: string;
  information: { fiscalNumber: string | null };
  addresses: { number: string; address: string; zipCode: string; city: string; country: string }[];
  users: UserView[];
  createdAt: Time;
  updatedAt: Time;
}

export interface HeadquarterView {
  id: string;
  name: string;
  organizations: { id: string; name: string }[];
  createdAt: Date;
  updatedAt: Date;
}

const userView = (u: User): UserView => ({
  id: u.id,
  firstName: u.firstName,
  lastName: u.lastName,
  phone: u.phone,
  mobile: u.mobile ?? null,
  email: u.email,
  isRegistered: u.isRegistered,
});

/** The columns of an `app_user u` a UserView shows, and its row. */
export const USER_COLUMNS = 'u.id, u.first_name, u.last_name, u.phone, u.mobile, u.email, u.is_registered';
export interface UserRow {
  id: string;
  first_name: string;
  last_name: string;
  phone: string;
  mobile: string | null;
  email: string;
  is_registered: boolean;
}

export const userFromRow = (r: UserRow): UserView => ({
  id: r.id,
  firstName: r.first_name,
  lastName: r.last_name,
  phone: r.phone,
  mobile: r.mobile,
  email: r.email,
  isRegistered: r.is_registered,
});

/** An organization with its members (users in their `UserRow` form, by last name, first name and id). */
interface OrganizationRow {
  id: string;
  name: string;
  fiscal_number: string | null;
  addresses: OrganizationAddress[];
  users: UserRow[];
  created_at: PgTimestamp;
  updated_at: PgTimestamp;
}

/**
 * Organizations `o` with their members in one statement: the users of each as a JSON list of `UserRow`s (a user's
 * columns are text and booleans, which JSON keeps as they are).
 */
const ORGANIZATION_COLUMNS = `o.id, o.name, o.fiscal_number, o.addresses, o.created_at, o.updated_at,
  coalesce((select json_agg(json_build_object('id', u.id, 'first_name', u.first_name, 'last_name', u.last_name, 'phone', u.phone,
      'mobile', u.mobile, 'email', u.email, 'is_registered', u.is_registered) order by u.last_name, u.first_name, u.id)
    from membership m join app_user u on u.id = m.user_id where m.organization_id = o.id), '[]') as users`;

const organizationFromRow = (r: OrganizationRow): OrganizationView => ({
  id: r.id,
  name: r.name,
  information: { fiscalNumber: r.fiscal_number },
  addresses: r.addresses.map((a) => ({ number: a.number, address: a.address, zipCode: a.zipCode, city: a.city, country: a.country })),
  users: r.users.map(userFromRow),
  createdAt: rowTime(r.created_at!),
  updatedAt: rowTime(r.updated_at!),
});

/** Architect organizations of the caller, their users and headquarters; switching the current one. */
export class OrganizationService {
  constructor(private readonly sc: ServiceContext) {}

  /**
   * Organizations by id with their users, in one statement whatever their number. The ids are the caller's
   * (`caller.adminOrganizationIds`, or one that canSeeOrganization let through): the rows of those tenants.
   */
  async views(ids: string[]): Promise<OrganizationView[]> {
    const orgs = uuidList(ids);
    if (!orgs.length) return [];
    const rows = await this.sc.em.execute<OrganizationRow[]>(`select ${ORGANIZATION_COLUMNS} from organization o
      where ${ownedBy('o.id', orgs)} order by o.name, o.id`);
    return rows.map(organizationFromRow);
  }

  /** The caller as a user record: on the primary, where their rights were read (a replica may not have them yet). */
  async callerView(): Promise<UserView> {
    const [row] = await (this.sc.primaryEm ?? this.sc.em).execute<UserRow[]>(`select ${USER_COLUMNS} from app_user u where u.id = ?`, [this.sc.caller.userId]);
    if (!row) throw new NotFoundError('User not found');
    return userFromRow(row);
  }

  /** #17: organizations where the caller is Administrator. */
  list(): Promise<OrganizationView[]> {
    return this.views(this.sc.caller.adminOrganizationIds);
  }

  /** #20 */
  async get(id: string): Promise<OrganizationView> {
    if (!canSeeOrganization(this.sc, id)) throw new NotFoundError('Organization not found');
    return (await this.views([id]))[0];
  }

  /** #19: sets the caller's current organization. */
  async switch(id: string): Promise<OrganizationView> {
    const organizationId = id.toLowerCase();
    if (!canSeeOrganization(this.sc, organizationId)) throw new NotFoundError('Organization not found');
    // In a transaction like every write: behind a pooler its bounds come with the BEGIN (src/platform/database/limits.ts).
    await this.sc.em.transactional((em) => em.nativeUpdate(User, { id: this.sc.caller.userId }, { currentOrganization: organizationId }));
    this.sc.caller.currentOrganizationId = organizationId;
    this.sc.callers?.forget(this.sc.caller.userId);
    return (await this.views([organizationId]))[0];
  }

  /** #18: a user of one of the caller's organizations. */
  async user(userId: string): Promise<UserView & { organizationIds: string[] }> {
    const memberships = await this.sc.em.find(Membership, {
      user: userId,
      organization: inOrganizations(this.sc.caller.adminOrganizationIds),
    }, { populate: ['user'], orderBy: { organization: { name: 'asc', id: 'asc' } } });
    if (!memberships.length) throw new NotFoundError('User not found');
    return { ...userView(memberships[0].user), organizationIds: memberships.map((m) => m.organization.id) };
  }

  /** #21: the headquarter of one of the caller's organizations, with its visible member organizations. */
  async headquarterOf(organizationId: string): Promise<HeadquarterView> {
    if (!canSeeOrganization(this.sc, organizationId)) throw new NotFoundError('Organization not found');
    const org = await this.sc.em.findOneOrFail(Organization, { id: organizationId }, { populate: ['headquarter'] });
    if (!org.headquarter) throw new NotFoundError('The organization belongs to no headquarter');
    const hq = org.headquarter as Headquarter;
    const members = await this.sc.em.find(Organization, {
      headquarter: hq.id,
      kind: OrganizationKind.ARCHITECT,
      id: inOrganizations(this.sc.caller.adminOrganizationIds),
    }, { orderBy: { name: 'asc' } });
    return {
      id: hq.id,
      name: hq.name,
      organizations: members.map((m) => ({ id: m.id, name: m.name })),
      createdAt: hq.createdAt,
      updatedAt: hq.updatedAt,
    };
  }
}
