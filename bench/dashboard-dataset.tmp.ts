import type { MikroORM } from '@mikro-orm/postgresql';
import { DEMO_IDS } from '../src/seed/demo-data';

// TEMPORARY: replaced by the shared bench/dataset.ts of branch i10-stats once it lands.
// 1,000 projects (the architect's), 8 templates each (6 trades, the first with 2 slices), 6 documents per
// template, 2 versions per document; created after the demo data so that they come first, newest first.
const BUILD = [
  `insert into contractor (id, created_at, updated_at, legacy_id, organization_id, name, email)
   select gen_random_uuid(), now(), now(), 'BENCHCTR' || lpad(i::text, 9, '0'), '${DEMO_IDS.organizations.atelierDemo}',
     'Entreprise ' || i, 'bench-' || i || '@example.test'
   from generate_series(1, 300) i`,
  `insert into project (id, created_at, updated_at, legacy_id, organization_id, name, construction_type, trade_list_id, response_type)
   select gen_random_uuid(), now() + i * interval '1 ms', now(), 'BENCHPRJ' || lpad(i::text, 9, '0'),
     '${DEMO_IDS.organizations.atelierDemo}'::uuid, 'Bench ' || i, 'office', '${DEMO_IDS.tradeLists.standard}', 'DPGF'
   from generate_series(1, 1000) i`,
  `insert into project_trade (id, created_at, updated_at, legacy_id, project_id, number, name, short_name)
   select gen_random_uuid(), now(), now(), 'BENCHPTR' || lpad((row_number() over ())::text, 9, '0'), p.id,
     lpad(n::text, 2, '0'), 'Lot ' || n, 'L' || n
   from project p cross join generate_series(1, 6) n where p.legacy_id like 'BENCHPRJ%'`,
  `insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, budget)
   select gen_random_uuid(), now(), now(), 'BENCHTPL' || lpad((row_number() over ())::text, 9, '0'), pt.project_id, pt.id,
     10000 + abs(hashtext(pt.id::text)) % 90000
   from project_trade pt where pt.legacy_id like 'BENCHPTR%'`,
  `insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, parent_id, is_slice, slice_name, budget)
   select gen_random_uuid(), now() + k * interval '1 ms', now(), 'BENCHSLC' || lpad((row_number() over ())::text, 9, '0'), t.project_id, t.trade_id,
     t.id, true, 'Tranche ' || k, round(t.budget / 3, 2)
   from template t join project_trade pt on pt.id = t.trade_id cross join generate_series(1, 2) k
   where t.legacy_id like 'BENCHTPL%' and pt.number = '01'`,
  `insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id, intention, dce_downloaded_at)
   select gen_random_uuid(), now(), now(), 'BENCHDOC' || lpad((row_number() over ())::text, 9, '0'), t.id, c.id,
     (array['YES', 'NO', 'MAYBE', null])[1 + (t.rn + k) % 4], case when (t.rn + k) % 3 = 0 then null else now() end
   from (select id, row_number() over (order by id) as rn from template where legacy_id like 'BENCH%') t
   cross join generate_series(0, 5) k
   join (select id, row_number() over (order by id) - 1 as idx from contractor where legacy_id like 'BENCHCTR%') c
     on c.idx = (t.rn * 6 + k) % 300`,
  `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, sent_at)
   select gen_random_uuid(), now(), now(), d.id, v,
     case when v = 2 and d.rn % 5 = 4 then 'IN_REVISION' when d.rn % 5 = 2 then 'DECLINED' when v = 2 and d.rn % 5 = 3 then 'DRAFT' else 'ANSWERED' end,
     case when d.rn % 5 = 2 then 0 else round(d.budget * (0.85 + (d.rn % 30) / 100.0), 2) end,
     case when d.rn % 5 = 2 then 0 else (d.rn % 4) * 100 end, now()
   from (select d.id, t.budget, row_number() over (order by d.id) as rn
         from document d join template t on t.id = d.template_id where d.legacy_id like 'BENCHDOC%') d
   cross join generate_series(1, 2) v`,
  'analyze',
];

export async function buildDashboardDataset(orm: MikroORM): Promise<void> {
  for (const sql of BUILD) await orm.em.getConnection().execute(sql);
}
