import { uuidArraySql } from '../../platform/database/uuid';
import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../../platform/errors/errors';
import { writableProject } from '../access';
import { holdWritable } from '../project-locks';
import { DocumentService, type DocumentView } from '../documents/document.service';
import type { InviteContractorsInput } from './invitation.input';
import { newLegacyId } from '../../platform/database/legacy-id';
import type { ServiceContext } from '../../platform/service-context';

export interface InvitationResult {
  /** The template invited to, and its project (lowercase ids). */
  projectId: string;
  templateId: string;
  /** Documents created by this request (each consumed one credit). */
  created: number;
  /** The documents of the invited contractors, in the order of the request. */
  documents: DocumentView[];
}

/** The time rows get: milliseconds, like every timestamp written from JavaScript, so cursors compare exactly. */
const NOW = "date_trunc('milliseconds', now())";

/** Credits one new invitation consumes. */
const INVITATION_CREDITS = 1;

/** Contractor invitations (#15): directory entries, documents and the credits they consume. */
export class InvitationService {
  constructor(private readonly sc: ServiceContext) {}

  /**
   * Each contractor becomes (or reuses, by lowercase email) an entry of the organization's directory and
   * gets one document on the template; each new document consumes a credit in the same transaction.
   * Inviting an email again creates and consumes nothing. Concurrent requests are settled by the unique
   * keys (organization, email) and (template, contractor): `on conflict do nothing` keeps one of each.
   */
  async invite(projectId: string, templateId: string, input: InviteContractorsInput): Promise<InvitationResult> {
    const project = await writableProject(this.sc, projectId);
    const organizationId = project.organization.id;
    const tplId = templateId.toLowerCase();

    // The first item with an email wins: one email is one contractor.
    const byEmail = new Map<string, { name: string; email: string; phone: string | null }>();
    for (const c of input.contractors) {
      const email = c.email.trim().toLowerCase();
      if (!byEmail.has(email)) byEmail.set(email, { name: c.name.trim() || c.name, email, phone: c.phone?.trim() || null });
    }
    // Inserted in email order: concurrent requests then wait on each other's rows in one order, never in a cycle.
    const items = [...byEmail.values()].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
    const emails = items.map((c) => c.email);
    const requestOrder = [...byEmail.keys()];

    const { created, contractorIds } = await this.sc.em.transactional(async (em) => {
      await holdWritable(em, project.id);
      // The template cannot be deleted under the new documents (delete locks it for update). A key-share
      // lock, not a share lock: concurrent invitations both update the row below and would deadlock.
      const [template] = await em.execute<Array<{ id: string }>>('select id from template where id = ? and project_id = ? for key share', [tplId, project.id]);
      if (!template) throw new NotFoundError('Template not found');

      await em.execute(`
        insert into contractor (id, created_at, updated_at, legacy_id, organization_id, name, email, phone)
        select c.id, ${NOW}, ${NOW}, c.legacy_id, ?, c.name, c.email, c.phone
        from unnest(${uuidArraySql(items.map(() => randomUUID()))}, array[?]::text[], array[?]::text[], array[?]::text[], array[?]::text[])
          as c(id, legacy_id, name, email, phone)
        on conflict (organization_id, email) do nothing`, [
        organizationId, items.map(() => newLegacyId()), items.map((c) => c.name), emails, items.map((c) => c.phone),
      ]);
      const contractors = await em.execute<Array<{ id: string; email: string }>>(
        'select id, email from contractor where organization_id = ? and email = any(array[?]::text[])', [organizationId, emails],
      );
      const idByEmail = new Map(contractors.map((c) => [c.email, c.id]));
      const ids = emails.map((e) => idByEmail.get(e)!);

      const inserted = await em.execute<Array<{ id: string }>>(`
        insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id)
        select d.id, ${NOW}, ${NOW}, d.legacy_id, ?, d.contractor_id
        from unnest(${uuidArraySql(ids.map(() => randomUUID()))}, array[?]::text[], ${uuidArraySql(ids)}) as d(id, legacy_id, contractor_id)
        on conflict (template_id, contractor_id) do nothing
        returning id`, [tplId, ids.map(() => newLegacyId())]);

      if (inserted.length) {
        await em.execute(`
          insert into credit_ledger_entry (id, created_at, updated_at, organization_id, amount, kind, reference_id)
          select gen_random_uuid(), ${NOW}, ${NOW}, ?, ?, 'INVITATION', r.id
          from unnest(${uuidArraySql(inserted.map((r) => r.id))}) as r(id)`, [organizationId, INVITATION_CREDITS]);
        // The consultation starts with its first invitation.
        await em.execute(`update template set consultation_started_at = ${NOW}, updated_at = ${NOW} where id = ? and consultation_started_at is null`, [tplId]);
      }
      return { created: inserted.length, contractorIds: requestOrder.map((e) => idByEmail.get(e)!) };
    });

    const documents = new DocumentService(this.sc);
    const found = await documents.documentsOfContractors(tplId, contractorIds);
    const order = new Map(contractorIds.map((id, i) => [id, i]));
    found.sort((a, b) => order.get(a.contractorId)! - order.get(b.contractorId)!);
    return { projectId: project.id, templateId: tplId, created, documents: await documents.views(found) };
  }
}
