/**
 * The words the OpenAPI document (`./openapi`) is written in: its JSON value type, and the short builders
 * of its recurring pieces (a schema reference, a closed object schema, a JSON response, the problem
 * responses by status, the safe-id path parameters).
 */
import { SAFE_ID_PATTERN } from '../../wire/safe-id';

/** A JSON value: what every part of the document is. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** A reference to the schema `name` under `components.schemas`. */
export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** An object schema with exactly `properties` (no others), `required` all of them unless given. */
export const obj = (properties: Record<string, Json>, required: readonly string[] = Object.keys(properties)): Json => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
});

/** A response whose `application/json` body `schema` describes. */
export const json = (schema: Json, description: string): Json => ({ description, content: { 'application/json': { schema } } });

/** The problem responses of `statuses` (references to `components.responses.Problem<status>`), by status. */
export const problems = (...statuses: readonly number[]): Record<string, Json> =>
  Object.fromEntries(statuses.map((status) => [String(status), { $ref: `#/components/responses/Problem${status}` }]));

/** The schema of an id in a path or a query: a safe id. */
export const ID = { type: 'string', pattern: SAFE_ID_PATTERN };

/** The required path parameters `names`, each a safe id. */
export const pathParams = (...names: readonly string[]): readonly Json[] => names.map((name) => ({ name, in: 'path', required: true, schema: ID }));
