import { uuidArraySql } from './uuid';

/**
 * Tenancy, written once: a caller reads and writes the rows of the organizations where they are Administrator
 * (`caller.adminOrganizationIds`), or of the one organization an operation is about, and nothing else. A statement
 * states it with `ownedBy`, an ORM filter with `inOrganizations`; test/tenancy.test.ts fails on any other way of
 * writing it, so that a reader finds every tenancy condition by these two names.
 *
 * The ids are written into the statement as one `uuid[]` literal (uuidArraySql): each is checked to be a UUID.
 */
export function ownedBy(column: string, organizationIds: readonly string[]): string {
  return `${column} = any(${uuidArraySql(organizationIds)})`;
}

/** The same condition as an ORM filter on a relation to `Organization`: `{ organization: inOrganizations(ids) }`. */
export function inOrganizations(organizationIds: readonly string[]): { $in: string[] } {
  return { $in: [...organizationIds] };
}
