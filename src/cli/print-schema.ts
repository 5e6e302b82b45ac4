/** Writes the GraphQL schema to schema.graphql (committed, so every schema change shows in review). */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { printSchema } from 'graphql';
import { graphqlSchema } from '../modules/schema';

export const SCHEMA_FILE = path.resolve(__dirname, '../../../schema.graphql');

graphqlSchema().then((schema) => {
  writeFileSync(SCHEMA_FILE, `${printSchema(schema)}\n`);
  console.log(`wrote ${SCHEMA_FILE}`);
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
