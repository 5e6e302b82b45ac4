/**
 * Output records: one class per record, whose fields feed the GraphQL object type (type-graphql's `@Field`)
 * and the REST schema of the OpenAPI document (`restSchema`), as the input classes of ../inputs feed
 * validation, GraphQL and OpenAPI.
 *
 * A field declared with `@Field` is sent by REST too, under its snake_case name, with the type and nullability
 * GraphQL gives it. `@Rest` completes it for REST (an example from the demo data, a format) or, given a type,
 * declares a field only REST sends: the relations REST embeds in a record (a template's `trade` and `stats`),
 * which GraphQL resolves as fields of their own. `@NotInRest` leaves out a GraphQL field REST does not send.
 * Every field is required (sent, `null` when the record has no value) unless `optional` says otherwise.
 */
import { GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLScalarType, GraphQLString } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { camelToSnake } from '../validation/validation';

export type JsonSchema = Record<string, unknown>;

/** An output class (also: a constructor whose prototype decorators see). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any constructor, whatever its parameters
export type RecordClass = abstract new (...args: any[]) => unknown;

/** What a field holds: a scalar (String, Number, Boolean, Date, Int, Float, ID), an enum object, or an output class. */
export type OutputType = RecordClass | object;

export interface RestFieldOptions {
  nullable?: boolean;
  description?: string;
  /** A value of the demo data (docs/openapi.md). */
  example?: unknown;
  /** JSON Schema keywords that say more than the type: `format`, `minimum`, `enum`. */
  schema?: JsonSchema;
  /** Sent only in some answers: left out of `required`. */
  optional?: boolean;
}

interface RestField extends RestFieldOptions {
  property: string;
  /** `() => [Type]` for a list, as in type-graphql. */
  type?: () => OutputType | [OutputType];
  hidden?: boolean;
}

interface RestRecordOptions {
  /** Component name; the class name by default. */
  name?: string;
  description?: string;
}

const restFields = new Map<RecordClass, RestField[]>();
const records = new Map<RecordClass, RestRecordOptions>();
/** Every output class by component name: a name means one shape. */
const byName = new Map<string, RecordClass>();

function addField(target: RecordClass, field: RestField): void {
  const list = restFields.get(target) ?? [];
  const known = list.find((f) => f.property === field.property);
  if (known) Object.assign(known, field);
  else list.push(field);
  restFields.set(target, list);
}

/**
 * `@Rest({ example })` completes a GraphQL field for REST; `@Rest(() => Type, options)` (`() => [Type]` for a
 * list) declares a field only REST sends.
 */
export function Rest(typeOrOptions?: (() => OutputType | [OutputType]) | RestFieldOptions, options: RestFieldOptions = {}): PropertyDecorator {
  return (prototype, key) => {
    if (typeof typeOrOptions === 'function') {
      // A type of REST's own replaces GraphQL's, list or not; the thunk runs when the schema is built.
      addField(prototype.constructor as RecordClass, { ...options, property: String(key), type: typeOrOptions as () => OutputType | [OutputType] });
    } else {
      addField(prototype.constructor as RecordClass, { ...typeOrOptions, property: String(key) });
    }
  };
}

/** A GraphQL field REST does not send (the id GraphQL gives statistics for its cache, the GraphQL-only ids). */
export function NotInRest(): PropertyDecorator {
  return (prototype, key) => addField(prototype.constructor as RecordClass, { property: String(key), hidden: true });
}

/** Names the REST component of a class (the class name by default) and describes it. */
export function RestRecord(options: RestRecordOptions): ClassDecorator {
  return (target) => {
    records.set(target as unknown as RecordClass, options);
  };
}

const componentName = (cls: RecordClass): string => records.get(cls)?.name ?? cls.name;

/** The classes from `cls` up to its root, root first: inherited fields come first. */
function lineage(cls: RecordClass): RecordClass[] {
  const chain: RecordClass[] = [];
  for (let c = cls; c && c !== Function.prototype && c !== Object; c = Object.getPrototypeOf(c)) chain.unshift(c);
  return chain;
}

/** The fields REST sends of an output class, GraphQL's first (in their order), then those only REST sends. */
function fieldsOf(cls: RecordClass): RestField[] {
  const fields = new Map<string, RestField>();
  const storage = getMetadataStorage();
  for (const c of lineage(cls)) {
    for (const f of storage.fields.filter((m) => m.target === c)) {
      fields.set(f.name, {
        property: f.name,
        // type-graphql knows a list only once the type thunk has run.
        type: () => {
          const t = f.getType() as OutputType;
          return f.typeOptions.array ? [t] : t;
        },
        nullable: f.typeOptions.nullable === true,
        description: f.description,
      });
    }
    for (const r of restFields.get(c) ?? []) {
      const field: RestField = { ...fields.get(r.property), ...r };
      if (!r.type && !fields.has(r.property) && !r.hidden) throw new Error(`@Rest on ${c.name}.${r.property} needs a type: it is no GraphQL field`);
      fields.set(r.property, field);
    }
  }
  return [...fields.values()].filter((f) => !f.hidden);
}

const SCALARS = new Map<unknown, JsonSchema>([
  [String, { type: 'string' }], [GraphQLString, { type: 'string' }],
  [Boolean, { type: 'boolean' }], [GraphQLBoolean, { type: 'boolean' }],
  [Number, { type: 'number' }], [GraphQLFloat, { type: 'number' }],
  [GraphQLInt, { type: 'integer' }],
  // Every id REST sends is a UUID (the GraphQL-only ids of statistics are @NotInRest).
  [GraphQLID, { type: 'string', format: 'uuid' }],
  [Date, { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with microseconds' }],
]);

export const ref = (cls: RecordClass): JsonSchema => {
  register(cls);
  return { $ref: `#/components/schemas/${componentName(cls)}` };
};

function register(cls: RecordClass): void {
  const name = componentName(cls);
  const known = byName.get(name);
  if (known && known !== cls) throw new Error(`Two output classes named ${name}: ${known.name} and ${cls.name}`);
  byName.set(name, cls);
}

/** A nullable form of a schema, in OpenAPI 3.1's JSON Schema. */
function orNull(schema: JsonSchema): JsonSchema {
  if (schema.$ref) return { oneOf: [schema, { type: 'null' }] };
  const out: JsonSchema = { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

/** The JSON Schema of a value of a type: a scalar, an enum (its values) or a `$ref` to an output class. */
function typeSchema(type: OutputType): JsonSchema {
  const scalar = SCALARS.get(type);
  if (scalar) return { ...scalar };
  if (type instanceof GraphQLScalarType) throw new Error(`No JSON Schema for the scalar ${type.name}`);
  const enumeration = getMetadataStorage().enums.find((e) => e.enumObj === type);
  if (enumeration) return { type: 'string', enum: Object.values(enumeration.enumObj) };
  if (typeof type === 'function') return ref(type as RecordClass);
  throw new Error('An output field of an unknown type');
}

/** The REST schema of an output class: snake_case properties, each required unless optional. */
function restSchema(cls: RecordClass): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const f of fieldsOf(cls)) {
    const name = camelToSnake(f.property);
    const type = f.type!();
    let schema = typeSchema(Array.isArray(type) ? type[0] : type);
    // A description of its own replaces the type's ("ISO 8601 ..."), a $ref takes none beside it in lint rules.
    if (f.description && !schema.$ref) schema.description = f.description;
    if (f.schema) schema = { ...schema, ...f.schema };
    if (Array.isArray(type)) schema = { type: 'array', items: schema };
    if (f.nullable) schema = orNull(schema);
    if (f.example !== undefined) schema.examples = [f.example];
    properties[name] = schema;
    if (!f.optional) required.push(name);
  }
  const record = records.get(cls);
  return { type: 'object', ...(record?.description ? { description: record.description } : {}), required, properties };
}

/** The components a document's `$ref`s reach, by name, each built from its class once. */
export function outputComponents(document: unknown): Record<string, JsonSchema> {
  const components: Record<string, JsonSchema> = {};
  const pending = new Set<string>();
  const collect = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(collect);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) pending.add(v.slice('#/components/schemas/'.length));
        else collect(v);
      }
    }
  };
  collect(document);
  while (pending.size) {
    const [name] = pending;
    pending.delete(name);
    if (components[name]) continue;
    const cls = byName.get(name);
    if (!cls) continue;
    components[name] = restSchema(cls);
    collect(components[name]);
    for (const n of [...pending]) if (components[n]) pending.delete(n);
  }
  return components;
}
