import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { validateInstance } from '../services/validation';
import { freshLoadsAfterMutations } from './loaders';
import { LEVELING_RESOLVERS } from './resolvers/leveling.resolver';
import { DirectoryResolver } from './resolvers/directory.resolver';
import { OrganizationResolver, UserResolver } from './resolvers/organization.resolver';
import { PAYLOAD_RESOLVERS } from './resolvers/payload.resolver';
import { ProjectResolver } from './resolvers/project.resolver';
import { ProjectTradeResolver, ProjectTradesFieldResolver } from './resolvers/project-trade.resolver';
import { DocumentResolver, ProjectTemplatesFieldResolver, TemplateResolver } from './resolvers/template.resolver';
import { DateTimeScalar } from './scalars';

let built: Promise<GraphQLSchema> | null = null;

/** The schema, built once per process from the resolvers and types. */
export function graphqlSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers: [UserResolver, OrganizationResolver, ProjectResolver, ProjectTradesFieldResolver, ProjectTradeResolver,
      ProjectTemplatesFieldResolver, TemplateResolver, DocumentResolver, DirectoryResolver, ...PAYLOAD_RESOLVERS, ...LEVELING_RESOLVERS],
    scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
    // Inputs are validated by the same rules as REST (src/services/inputs), with the same error bodies.
    validateFn: async (argValue) => {
      if (argValue && typeof argValue === 'object' && !Array.isArray(argValue)) await validateInstance(argValue);
      if (Array.isArray(argValue)) for (const item of argValue) if (item && typeof item === 'object') await validateInstance(item);
    },
  }).then(freshLoadsAfterMutations);
  return built;
}
