import { inOrganizations } from '../../platform/database/tenancy';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Membership } from '../organizations/membership.entity';
import { PartnerRole, UserPartnerRole } from './partner-role.entity';
import { ConflictError, NotFoundError, ValidationError } from '../../platform/errors/errors';
import type { ServiceContext } from '../../platform/service-context';

export interface PartnerRoleView {
  id: string;
  code: string;
  name: string;
  /** When the role was given to the user. */
  assignedAt: Date;
}

/** Partner-platform roles of the users of the caller's organizations (#26-#28). */
export class PartnerRoleService {
  constructor(private readonly sc: ServiceContext) {}

  /** A user is addressable when they belong to one of the caller's Administrator organizations. */
  private async assertVisibleUser(em: EntityManager, userId: string): Promise<void> {
    const count = await em.count(Membership, { user: userId, organization: inOrganizations(this.sc.caller.adminOrganizationIds) });
    if (!count) throw new NotFoundError('User not found');
  }

  private async rolesOf(em: EntityManager, userId: string): Promise<PartnerRoleView[]> {
    const held = await em.find(UserPartnerRole, { user: userId }, { populate: ['role'], orderBy: { role: { code: 'asc' } } });
    return held.map((h) => ({ id: h.role.id, code: h.role.code, name: h.role.name, assignedAt: h.createdAt }));
  }

  /** #26 */
  async list(userId: string): Promise<PartnerRoleView[]> {
    const id = userId.toLowerCase();
    await this.assertVisibleUser(this.sc.em, id);
    return this.rolesOf(this.sc.em, id);
  }

  /**
   * #27: gives the user the standard role, or the known role named by `roleCode`. Idempotent: `assigned`
   * is false when the user already held it.
   */
  assign(userId: string, roleCode?: string | null): Promise<{ assigned: boolean; roles: PartnerRoleView[] }> {
    const id = userId.toLowerCase();
    return this.sc.em.transactional(async (em) => {
      await this.assertVisibleUser(em, id);
      const role = await em.findOne(PartnerRole, roleCode ? { code: roleCode } : { isStandard: true }, { orderBy: { code: 'asc' } });
      if (!role) {
        if (roleCode) throw new ValidationError([{ field: 'role', message: 'must be the code of a known partner role' }]);
        throw new ConflictError('No standard partner role is configured');
      }
      const now = new Date();
      // ON CONFLICT keeps two concurrent assignments from failing on the (user, role) unique constraint.
      const inserted = await em.execute<{ id: string }[]>(
        `insert into user_partner_role (id, created_at, updated_at, user_id, role_id) values (?, ?, ?, ?, ?)
         on conflict (user_id, role_id) do nothing returning id`,
        [randomUUID(), now, now, id, role.id],
      );
      return { assigned: inserted.length > 0, roles: await this.rolesOf(em, id) };
    });
  }

  /** #28: removes every role of the user. */
  async removeAll(userId: string): Promise<void> {
    const id = userId.toLowerCase();
    await this.sc.em.transactional(async (em) => {
      await this.assertVisibleUser(em, id);
      await em.nativeDelete(UserPartnerRole, { user: id });
    });
  }
}
