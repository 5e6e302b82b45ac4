import { GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { getMetadataStorage } from 'type-graphql';

/**
 * type-graphql calls a `@FieldResolver` method through a generic handler that, on every call, builds a
 * resolver-data object, looks the class instance up, sorts and maps the parameter descriptions and checks them
 * for promises: for the thousands of documents and versions of a dashboard, more allocation than the data. A
 * method that takes only the parent record (untyped: nothing to convert), and the context or nothing else, under no middleware
 * and no authorization, needs none of it: it is called directly. Every other field keeps type-graphql's handler.
 * The schema must be built without global middlewares or an auth checker (schema.ts).
 */
export function directFieldResolvers(schema: GraphQLSchema): GraphQLSchema {
  const storage = getMetadataStorage();
  type Instance = Record<string, (...args: unknown[]) => unknown>;
  const instances = new Map<unknown, Instance>();
  for (const resolver of storage.fieldResolvers) {
    if (resolver.kind !== 'external' || resolver.middlewares?.length || resolver.roles?.length || !resolver.getObjectType) continue;
    const params = [...(resolver.params ?? [])].sort((a, b) => a.index - b.index);
    const plain = params.length >= 1 && params.length <= 2
      && params[0].kind === 'root' && !params[0].propertyName && [undefined, Object].includes(params[0].getType?.() as never)
      && (params.length === 1 || (params[1].kind === 'context' && !params[1].propertyName));
    if (!plain) continue;
    const typeClass = resolver.getObjectType();
    const typeName = storage.objectTypes.find((o) => o.target === typeClass)?.name;
    const type = typeName ? schema.getType(typeName) : undefined;
    const field = type instanceof GraphQLObjectType ? type.getFields()[resolver.schemaName] : undefined;
    if (!field) continue;
    let instance = instances.get(resolver.target);
    if (!instance) instances.set(resolver.target, instance = new (resolver.target as new () => Instance)());
    const method = instance[resolver.methodName];
    const target = instance;
    field.resolve = (root, _args, context) => method.call(target, root, context);
  }
  return schema;
}
