/**
 * The documents of the templates of some projects (a condition on `t.project_id`), reached through each
 * template's index. Joined plainly, the planner estimates so many documents per template that it reads every
 * document of every organization and hashes them (16-19 ms on the dashboard's data set, growing with the
 * platform); `offset 0` keeps the lateral from being flattened into that plan (6-7 ms, a few index probes per
 * template).
 */
export const PROJECT_DOCUMENTS_FROM = `template t
    join project p on p.id = t.project_id
    cross join lateral (select * from document d where d.template_id = t.id offset 0) d`;
