import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

let t: TestApp;
let architect: string;

const P = '/api/svc/v1';
const { projects: PRJ, templates: TPL, contractors: CTR, organizations: ORG, projectTrades: TRD } = DEMO_IDS;
const UNKNOWN = '0b0b0b0b-0000-4000-8000-000000000000';

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return t.orm.em.fork().getConnection().execute<T[]>(query, params);
}
const count = async (query: string, params: unknown[] = []) => Number((await sql<{ n: string }>(query, params))[0].n);

/** Credits ledger entries of an organization. */
const credits = (organizationId: string) => sql<{ amount: number; kind: string; reference_id: string }>(
  'select amount, kind, reference_id from credit_ledger_entry where organization_id = ? order by created_at, reference_id', [organizationId],
);
const creditCount = () => count('select count(*) as n from credit_ledger_entry');
const documentCount = () => count('select count(*) as n from document');
const contractorCount = () => count('select count(*) as n from contractor');

const invite = (projectId: string, templateId: string, body: unknown, token = architect, prefix = P) =>
  request(t.url, 'POST', `${prefix}/projects/${projectId}/templates/${templateId}/contractors`, { token, body });

/** A new template of the residence project, so each test starts from a consultation without documents. */
async function freshTemplate(tradeNumber: string): Promise<string> {
  const res = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/templates`, { token: architect, body: { trade_id: TRD.residence[tradeNumber] } });
  expect(res.status).toBe(201);
  return res.body.template.id;
}

describe('POST /api/svc/v1/projects/{projectId}/templates/{templateId}/contractors (#15)', () => {
  it('creates directory entries and documents for new contractors, reuses one by email, and consumes one credit per document: 201', async () => {
    const templateId = await freshTemplate('03');
    const [ledger, contractors] = [await credits(ORG.atelierDemo), await contractorCount()];
    const res = await invite(PRJ.residence, templateId, { contractors: [
      { name: 'Toitures Blanc', email: 'Contact@Toitures-Blanc.fr', phone: '04 78 00 11 22' },
      // Maçonnerie Petit et Fils is in Atelier Demo's directory: reused, its name unchanged.
      { name: 'Petit', email: 'DEVIS@maconnerie-petit.fr' },
    ] });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['documents']);
    const [blanc, petit] = res.body.documents;
    expect(blanc).toEqual({
      id: expect.any(String),
      contractor: { id: expect.any(String), name: 'Toitures Blanc', information: { fiscal_number: null }, email: 'contact@toitures-blanc.fr' },
      dce_downloaded_at: null, intention: null, state: 'PENDING', versions: [],
    });
    expect(petit.contractor).toEqual({ id: CTR.maconneriePetit, name: 'Maçonnerie Petit et Fils', information: { fiscal_number: null }, email: 'devis@maconnerie-petit.fr' });

    expect(await contractorCount()).toBe(contractors + 1);
    const [entry] = await sql('select organization_id, name, email, phone, length(legacy_id) as legacy from contractor where id = ?', [blanc.contractor.id]);
    expect(entry).toEqual({ organization_id: ORG.atelierDemo, name: 'Toitures Blanc', email: 'contact@toitures-blanc.fr', phone: '04 78 00 11 22', legacy: 17 });
    expect(await sql('select id, contractor_id from document where template_id = ? order by contractor_id', [templateId])).toEqual(
      [{ id: blanc.id, contractor_id: blanc.contractor.id }, { id: petit.id, contractor_id: CTR.maconneriePetit }].sort((a, b) => a.contractor_id.localeCompare(b.contractor_id)),
    );
    const after = await credits(ORG.atelierDemo);
    expect(after).toHaveLength(ledger.length + 2);
    const added = after.filter((e) => !ledger.some((l) => l.reference_id === e.reference_id));
    expect(added.map((e) => [e.amount, e.kind, e.reference_id]).sort()).toEqual([[1, 'INVITATION', blanc.id], [1, 'INVITATION', petit.id]].sort());

    // The consultation has started.
    const list = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates`, { token: architect });
    const record = list.body.templates.find((x: { id: string }) => x.id === templateId);
    expect(record.consultation_started_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(record.stats).toMatchObject({ contractors: 2, contractors_pending: 2 });
  });

  it('creates nothing and consumes no credit when the same contractors are invited again: 200 with their documents', async () => {
    const templateId = await freshTemplate('04');
    const body = { contractors: [{ name: 'Menuiserie Bernard', email: 'atelier@menuiserie-bernard.fr' }, { name: 'Alu Concept', email: 'alu@concept.test' }] };
    const first = await invite(PRJ.residence, templateId, body);
    expect(first.status).toBe(201);
    const [ledger, documents, contractors] = [await creditCount(), await documentCount(), await contractorCount()];
    const again = await invite(PRJ.residence, templateId, { contractors: [{ name: 'Other name', email: 'ALU@concept.test' }, { name: 'Bernard', email: 'atelier@menuiserie-bernard.fr' }] });
    expect(again.status).toBe(200);
    // In the order of the request.
    expect(again.body.documents.map((d: { id: string }) => d.id)).toEqual([first.body.documents[1].id, first.body.documents[0].id]);
    expect(again.body.documents[0].contractor.name).toBe('Alu Concept');
    expect([await creditCount(), await documentCount(), await contractorCount()]).toEqual([ledger, documents, contractors]);
  });

  it('answers 201 and consumes one credit when one of the contractors is new', async () => {
    const templateId = await freshTemplate('05');
    await invite(PRJ.residence, templateId, { contractors: [{ name: 'Plâtres Roche', email: 'roche@platres.test' }] });
    const ledger = await creditCount();
    const res = await invite(PRJ.residence, templateId, { contractors: [{ name: 'Plâtres Roche', email: 'roche@platres.test' }, { name: 'Staff Lyon', email: 'staff@lyon.test' }] });
    expect(res.status).toBe(201);
    expect(res.body.documents.map((d: { contractor: { email: string } }) => d.contractor.email)).toEqual(['roche@platres.test', 'staff@lyon.test']);
    expect(await creditCount()).toBe(ledger + 1);
  });

  it('counts an email repeated inside one request once', async () => {
    const templateId = await freshTemplate('08');
    const [ledger, documents] = [await creditCount(), await documentCount()];
    const res = await invite(PRJ.residence, templateId, { contractors: [
      { name: 'Peintures Vidal', email: 'vidal@peintures.test' }, { name: 'Vidal bis', email: 'VIDAL@peintures.test' },
    ] });
    expect(res.status).toBe(201);
    expect(res.body.documents).toHaveLength(1);
    expect(res.body.documents[0].contractor.name).toBe('Peintures Vidal');
    expect([await creditCount(), await documentCount()]).toEqual([ledger + 1, documents + 1]);
  });

  it('gives an already invited contractor its document with its answers', async () => {
    const res = await invite(PRJ.residence, TPL.residenceCharpente, { contractors: [{ name: 'Vercors', email: 'e.chabert@charpentes-vercors.fr' }] });
    expect(res.status).toBe(200);
    expect(res.body.documents).toEqual([expect.objectContaining({
      id: DEMO_IDS.documents.residenceCharpenteVercors, state: 'ANSWERED', intention: 'YES',
      contractor: { id: CTR.charpentesVercors, name: 'Charpentes du Vercors', information: { fiscal_number: '44306184100047' }, email: 'e.chabert@charpentes-vercors.fr' },
      versions: [expect.objectContaining({ is_mandate: 'true', version: 1, sub_total: 61200, status: 'ANSWERED' })],
    })]);
  });

  it('uses the directory and the credits of the project\'s organization, not the caller\'s current one', async () => {
    const nordLedger = (await credits(ORG.atelierNord)).length;
    const demoLedger = (await credits(ORG.atelierDemo)).length;
    const res = await invite(PRJ.nordOffices, TPL.nordOfficesElectricite, { contractors: [
      // In Atelier Nord's directory under its own id.
      { name: 'Martin', email: 'luc.martin@electricite-martin.fr' },
      { name: 'Nord Câblage', email: 'contact@nord-cablage.test' },
    ] });
    expect(res.status).toBe(201);
    expect(res.body.documents[0].contractor.id).toBe(CTR.nordElectriciteMartin);
    const [created] = await sql('select organization_id from contractor where id = ?', [res.body.documents[1].contractor.id]);
    expect(created).toEqual({ organization_id: ORG.atelierNord });
    expect((await credits(ORG.atelierNord)).length).toBe(nordLedger + 1);
    expect((await credits(ORG.atelierDemo)).length).toBe(demoLedger);
  });

  it('keeps one contractor, one document and one credit when the same invitation arrives several times at once', async () => {
    const templateId = await freshTemplate('02');
    const [ledger, documents, contractors] = [await creditCount(), await documentCount(), await contractorCount()];
    const body = { contractors: [{ name: 'Bois & Co', email: 'bois@co.test' }] };
    const results = await Promise.all(Array.from({ length: 6 }, () => invite(PRJ.residence, templateId, body)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.documents[0].id)).size).toBe(1);
    expect([await creditCount(), await documentCount(), await contractorCount()]).toEqual([ledger + 1, documents + 1, contractors + 1]);
  });

  it('settles concurrent invitations of the same new contractors in different orders without failing', async () => {
    const templateId = await freshTemplate('07');
    const [ledger, contractors] = [await creditCount(), await contractorCount()];
    const people = Array.from({ length: 12 }, (_, i) => ({ name: `Entreprise ${i}`, email: `e${i}@race.test` }));
    const orders = [people, [...people].reverse(), [...people.slice(6), ...people.slice(0, 6)], [...people].reverse()];
    const results = await Promise.all(orders.map((contractors) => invite(PRJ.residence, templateId, { contractors })));
    expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    results.forEach((r, i) => expect(r.body.documents.map((d: { contractor: { email: string } }) => d.contractor.email)).toEqual(orders[i].map((p) => p.email)));
    expect(await count('select count(*) as n from document where template_id = ?', [templateId])).toBe(12);
    expect([await creditCount(), await contractorCount()]).toEqual([ledger + 12, contractors + 12]);
  });

  it('answers under /svc/v1 too', async () => {
    const templateId = await freshTemplate('06');
    const res = await invite(PRJ.residence, templateId, { contractors: [{ name: 'Élec Alias', email: 'alias@elec.test' }] }, architect, '/svc/v1');
    expect(res.status).toBe(201);
    expect(res.body.documents[0].contractor.email).toBe('alias@elec.test');
  });

  describe('validation', () => {
    const item = { name: 'Valid', email: 'valid@contractor.test' };
    it.each([
      ['contractors is missing', {}, [{ field: 'contractors', message: 'is required' }]],
      ['contractors is not an array', { contractors: item }, [{ field: 'contractors', message: 'must be an array' }]],
      ['contractors is empty', { contractors: [] }, [{ field: 'contractors', message: 'must have at least 1 item' }]],
      ['an item has no name', { contractors: [item, { email: 'x@y.test' }] }, [{ field: 'contractors.1.name', message: 'is required' }]],
      ['an item has no email', { contractors: [{ name: 'No mail' }] }, [{ field: 'contractors.0.email', message: 'is required' }]],
      ['an email is not an email', { contractors: [{ name: 'Bad', email: 'not-an-email' }] }, [{ field: 'contractors.0.email', message: 'must be an email address' }]],
      ['a name is not a string', { contractors: [{ name: 12, email: 'a@b.test' }] }, [{ field: 'contractors.0.name', message: 'must be a string' }]],
      ['a phone is not a string', { contractors: [{ ...item, phone: 612345678 }] }, [{ field: 'contractors.0.phone', message: 'must be a string' }]],
      ['an item has an unknown field', { contractors: [{ ...item, siret: '1' }] }, [{ field: 'contractors.0.siret', message: 'is not accepted by this operation' }]],
      ['an item is not an object', { contractors: ['valid@contractor.test'] }, [{ field: 'contractors.0', message: 'must be an object' }]],
      ['there are more than 200 items', { contractors: Array.from({ length: 201 }, (_, i) => ({ name: `C${i}`, email: `c${i}@many.test` })) },
        [{ field: 'contractors', message: 'must have at most 200 items' }]],
    ])('answers 400 when %s, and creates nothing', async (_rule, body, errors) => {
      const [ledger, documents] = [await creditCount(), await documentCount()];
      const res = await invite(PRJ.residence, TPL.residenceElectricite, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors });
      expect([await creditCount(), await documentCount()]).toEqual([ledger, documents]);
    });

    it('answers 400 for a malformed template id', async () => {
      const res = await invite(PRJ.residence, 'tpl-1', { contractors: [item] });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'templateId', message: 'must be a UUID' }]);
    });
  });

  it('answers 409 on an archived project and consumes nothing', async () => {
    const [ledger, contractors] = [await creditCount(), await contractorCount()];
    const res = await invite(PRJ.archivedHouse, TPL.archivedHouseGrosOeuvre, { contractors: [{ name: 'Late', email: 'late@archived.test' }] });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 409, message: 'The project is archived: it is read-only' });
    expect([await creditCount(), await contractorCount()]).toEqual([ledger, contractors]);
  });

  it('answers 404 for an unknown template, a template of another project, and another organization\'s project', async () => {
    const ledger = await creditCount();
    const body = { contractors: [{ name: 'Lost', email: 'lost@nowhere.test' }] };
    const unknown = await invite(PRJ.residence, UNKNOWN, body);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, message: 'Template not found' });
    const elsewhere = await invite(PRJ.residence, TPL.schoolDemolition, body);
    expect(elsewhere.body).toEqual(unknown.body);
    const foreign = await invite(PRJ.cabinetSudHall, TPL.cabinetSudCharpente, body);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ code: 404, message: 'Project not found' });
    expect(await creditCount()).toBe(ledger);
    expect(await sql('select id from contractor where email = ?', ['lost@nowhere.test'])).toEqual([]);
  });

  it('answers 401 without a token and creates nothing', async () => {
    const res = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceElectricite}/contractors`, {
      body: { contractors: [{ name: 'Anonymous', email: 'anon@x.test' }] },
    });
    expect(res.status).toBe(401);
    expect(await sql('select id from contractor where email = ?', ['anon@x.test'])).toEqual([]);
  });
});
