import type { DocumentView } from './document.service';
import { toRest } from '../../platform/rest/serialize';

/**
 * Documents as the REST interface shows them (templates' lists and detail, invitations): `is_mandate` is a string
 * holding `true` or `false` (interface.md; the output's `@Rest(() => String)` documents it), GraphQL keeps the boolean.
 */
export function restDocuments(docs: DocumentView[]): unknown {
  return toRest(docs.map((d) => ({ ...d, versions: d.versions.map(({ isMandate, ...v }) => ({ isMandate: String(isMandate), ...v })) })));
}
