// Checks a running built service (.ci/smoke-production, with src/ and examples/ removed): the IDE page and the
// files it loads, the OpenAPI document, a GraphQL query with a token from the development provider, /readyz.
// Exits 1 with the first failure on stderr.
const base = process.argv[2];

async function expectOk(what, response, check = () => true) {
  const body = await response.text();
  if (!response.ok || !check(body)) throw new Error(`${what}: ${response.status} ${body.slice(0, 300)}`);
  return body;
}

(async () => {
  const page = await expectOk('IDE page', await fetch(`${base}/graphql`, { headers: { Accept: 'text/html' } }), (b) => b.includes('id="graphiql"') && b.includes('subscription DashboardChanges'));
  const files = [...page.matchAll(/(?:src|href)="(\/graphql\/ide\/[^"]+)"/g)].map((m) => m[1]);
  if (files.length < 5) throw new Error(`IDE page: ${files.length} files named`);
  for (const file of files) await expectOk(`IDE file ${file}`, await fetch(`${base}${file}`));
  await expectOk('openapi.json', await fetch(`${base}/api/svc/v1/openapi.json`), (b) => JSON.parse(b).openapi !== undefined);
  const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: 'architect@demo.test', password: 'demo-password', scope: 'svc email profile' });
  const token = JSON.parse(await expectOk('token', await fetch(`${base}/auth/token`, { method: 'POST', body: form }))).access_token;
  await expectOk('GraphQL query', await fetch(`${base}/graphql`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ query: '{ me { id email } }' }),
  }), (b) => JSON.parse(b).data?.me?.email === 'architect@demo.test');
  await expectOk('/readyz', await fetch(`${base}/readyz`));
})().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
