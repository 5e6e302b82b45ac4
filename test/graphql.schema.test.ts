import { readFileSync } from 'node:fs';
import path from 'node:path';
import { printSchema } from 'graphql';
import { graphqlSchema } from '../src/modules/schema';

describe('schema.graphql', () => {
  it('is the schema the code builds (run `npm run schema:print` after a schema change)', async () => {
    const committed = readFileSync(path.resolve(__dirname, '../schema.graphql'), 'utf8');
    expect(committed).toBe(`${printSchema(await graphqlSchema())}\n`);
  });
});
