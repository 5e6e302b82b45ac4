import { DEMO_IDS } from '../src/seed/demo-ids';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { gql } from './support/graphql';
import { request } from './support/http';

/**
 * Timestamps "with microsecond precision" (interface.md; decisions.md section 2), end to end: what another writer
 * of the database (the contractor portal) stores to the microsecond is answered to the microsecond, in REST,
 * GraphQL and the leveling, and paged lists neither skip nor repeat rows created within one millisecond.
 */
const P = '/api/svc/v1';
const { projects: PRJ, templates: TPL, documents: DOC, organizations: ORG } = DEMO_IDS;

let t: TestApp;
let architect: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

describe('a time written to the microsecond by another writer', () => {
  const SENT_AT = '2026-10-20 09:00:00.000001+00';
  let documentId: string;
  beforeAll(async () => {
    // The portal answers a new version of a residence document, with its own clock.
    documentId = DOC.residenceGoDurand;
    await queryRows(t.databaseUrl, `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
      select gen_random_uuid(), $2::timestamptz, $2::timestamptz, $1, max(version) + 1, 'ANSWERED', 1000.5, 0, false, true, $2::timestamptz
      from document_version where document_id = $1`, [documentId, SENT_AT]);
  });

  it('is answered to the microsecond by REST (#16)', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceGrosOeuvre}/documents/${documentId}/download`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.versions.map((v: { sent_at: string | null }) => v.sent_at)).toContain('2026-10-20T09:00:00.000001Z');
  });

  it('is answered to the microsecond by GraphQL', async () => {
    const res = await gql(t.url, architect, 'query($id: ID!) { project(id: $id) { templates { documents { id versions { sentAt } } } } }', { id: PRJ.residence });
    const sent = res.body.data.project.templates.flatMap((tpl: { documents: Array<{ versions: Array<{ sentAt: string | null }> }> }) =>
      tpl.documents.flatMap((d) => d.versions.map((v) => v.sentAt)));
    expect(sent).toContain('2026-10-20T09:00:00.000001Z');
  });

  it('is answered to the microsecond by the leveling, as the offer\'s sent_at', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceGrosOeuvre}/leveling`, { token: architect });
    const entry = res.body.leveling.documents.find((d: { document_id: string }) => d.document_id === documentId);
    expect(entry.offer.sent_at).toBe('2026-10-20T09:00:00.000001Z');
  });

  it('is answered to the microsecond for records read as entities too (an organization)', async () => {
    await queryRows(t.databaseUrl, `update organization set created_at = '2026-01-05 08:30:00.123456+00' where id = $1`, [ORG.atelierDemo]);
    const res = await request(t.url, 'GET', `${P}/organizations`, { token: architect });
    const org = res.body.organizations.find((o: { id: string }) => o.id === ORG.atelierDemo);
    expect(org.created_at).toBe('2026-01-05T08:30:00.123456Z');
  });
});

describe('paging across rows created within one millisecond', () => {
  const NAMES = ['µs A', 'µs B', 'µs C', 'µs D', 'µs E'];
  beforeAll(async () => {
    // Five projects 1 µs apart, all in the same millisecond, newer than every other project: the first pages.
    await queryRows(t.databaseUrl, `insert into project (id, created_at, updated_at, legacy_id, organization_id, name, construction_type, trade_list_id, response_type)
      select gen_random_uuid(), timestamptz '2030-01-01 00:00:00.000100+00' + (i || ' microseconds')::interval, now(),
        'MICROPRJ' || lpad(i::text, 9, '0'), $1, 'µs ' || chr(64 + i), 'office', $2, 'DPGF'
      from generate_series(1, 5) i`, [ORG.atelierDemo, DEMO_IDS.tradeLists.standard]);
  });

  it('gives each project once, newest first, through REST pages of 2', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await request(t.url, 'GET', `${P}/projects?organization_id=${ORG.atelierDemo}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: architect });
      expect(res.status).toBe(200);
      seen.push(...res.body.projects.map((p: { name: string }) => p.name));
      cursor = res.body.next_cursor;
    } while (cursor && seen.length < 6);
    expect(seen.slice(0, 5)).toEqual([...NAMES].reverse());
  });

  it('gives each project once through GraphQL pages of 2', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 3; i++) {
      const res: { body: { data: { projects: { nodes: Array<{ name: string }>; pageInfo: { endCursor: string } } } } } = await gql(t.url, architect,
        'query($after: String) { projects(first: 2, after: $after) { nodes { name } pageInfo { endCursor } } }', { after });
      seen.push(...res.body.data.projects.nodes.map((p) => p.name));
      after = res.body.data.projects.pageInfo.endCursor;
    }
    expect(seen.slice(0, 5)).toEqual([...NAMES].reverse());
  });

  it('still reads a cursor written to the millisecond (before microseconds)', async () => {
    const old = Buffer.from(JSON.stringify({ c: '2030-01-01T00:00:00.001Z', i: 'ffffffff-ffff-4fff-bfff-ffffffffffff' })).toString('base64url');
    const res = await request(t.url, 'GET', `${P}/projects?limit=2&cursor=${old}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.projects.map((p: { name: string }) => p.name)).toEqual(['µs E', 'µs D']);
  });
});
