import { writeFileSync } from 'node:fs';
import { DEMO_IDS, DEMO_SIRETS } from '../src/seed/demo-data';
import { startTestApp } from './support/app';
import { tokenFor } from './support/auth';
import { request } from './support/http';

it('dumps', async () => {
  const t = await startTestApp();
  const token = await tokenFor(t.url, 'architect@demo.test');
  const P = DEMO_IDS.projects.residence, T = DEMO_IDS.templates.residenceGrosOeuvre, D = DEMO_IDS.documents.residenceGoDurand;
  const out: Record<string, unknown> = {};
  for (const p of [`/api/svc/v1/projects?limit=1`, `/api/svc/v1/projects/${P}`, `/api/svc/v1/projects/${P}/statistics`, `/api/svc/v1/projects/${P}/trades`,
    `/api/svc/v1/projects/${P}/templates?limit=1`, `/api/svc/v1/projects/${P}/templates/documents?limit=1`, `/api/svc/v1/projects/${P}/templates/${T}`,
    `/api/svc/v1/projects/${P}/templates/${T}/documents/${D}/download`, `/api/svc/v1/projects/${P}/templates/${T}/documents/${D}/download/1`,
    '/api/svc/v1/organizations', `/api/svc/v1/organizations/users/${DEMO_IDS.users.architect}`, `/api/svc/v1/organizations/headquarters/${DEMO_IDS.organizations.atelierDemo}`,
    `/api/svc/v1/contractors/${DEMO_IDS.contractors.batimentsDurand}`, '/api/svc/v1/trades/list', `/api/svc/v1/trades/list/${DEMO_IDS.tradeLists.standard}`,
    `/api/svc/v1/pf/${DEMO_IDS.users.architect}/roles`, '/api/internal/v1/trades/mapping/Gros%20%C5%93uvre', `/api/internal/v1/company/contacts/${DEMO_SIRETS.shared}`,
    `/api/internal/v1/company/trades/${DEMO_SIRETS.shared}`, '/api/v1/credits-usage', `/api/internal/v1/company/contacts/12345678901234`]) {
    const r = await request(t.url, 'GET', p, { token });
    out[p] = { status: r.status, body: r.body, headers: Object.fromEntries(r.headers) };
  }
  writeFileSync('/tmp/demo-responses.json', JSON.stringify(out, null, 1));
  await t.close();
});
