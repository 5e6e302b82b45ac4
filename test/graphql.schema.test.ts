import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isObjectType, printSchema } from 'graphql';
import { graphqlSchema } from '../src/modules/schema';
import { pageRangeOf } from '../src/platform/graphql/cost';

describe('schema.graphql', () => {
  it('is the schema the code builds (run `npm run schema:print` after a schema change)', async () => {
    const committed = readFileSync(path.resolve(__dirname, '../schema.graphql'), 'utf8');
    expect(committed).toBe(`${printSchema(await graphqlSchema())}\n`);
  });

  it('declares the range of every list field\'s first with @Paged, so that its cost is that of the page it uses (issue 41)', async () => {
    const schema = await graphqlSchema();
    const paged = Object.values(schema.getTypeMap()).filter(isObjectType)
      .flatMap((type) => Object.values(type.getFields()).filter((f) => f.args.some((a) => a.name === 'first')).map((f) => [`${type.name}.${f.name}`, !!pageRangeOf(f)]));
    expect(paged).toEqual([['Query.projects', true], ['Query.webhookAttempts', true]]);
  });
});
