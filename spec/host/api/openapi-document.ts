/**
 * Reading the operator API's OpenAPI 3.2 document in specs: its operations, the response it documents
 * for a status and content type, the SSE events an event stream's `itemSchema` documents, and a JSON
 * Schema 2020-12 validator (ajv) that resolves the document's own `$ref`s.
 */
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv/dist/2020';

/** The methods an OpenAPI path item may hold. */
export const OPENAPI_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** One SSE event as OpenAPI 3.2 models it (its `event`, `data`, `id` and `retry` fields). */
export interface SseItem {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
  readonly retry?: number;
}

/** One frame of the binary event stream, decoded as the document models it (`event`, `kind`, then an output's fields or an event's `data`). */
export interface BinaryItem {
  readonly event: string;
  readonly kind: number;
  readonly data?: string;
  readonly [field: string]: unknown;
}

interface SseBranch {
  readonly properties?: { readonly event?: { readonly const?: string }; readonly data?: unknown };
}

interface MediaType {
  readonly schema?: unknown;
  /** OpenAPI 3.2: the schema of each item of a sequential media type (an SSE event). */
  readonly itemSchema?: { readonly oneOf?: readonly SseBranch[] };
}
interface ResponseObject {
  readonly description: string;
  /** The response headers it documents, by name (`required`: every answer carries it). */
  readonly headers?: Readonly<Record<string, { readonly required?: boolean }>>;
  readonly content?: Readonly<Record<string, MediaType>>;
}
type Referenced<T> = T | { readonly $ref: string };
interface Operation {
  readonly operationId?: string;
  readonly tags?: readonly string[];
  readonly responses: Readonly<Record<string, Referenced<ResponseObject>>>;
}

/** The parts of the document the specs read. */
export interface OpenApiDocument {
  readonly openapi: string;
  readonly tags?: readonly { readonly name: string; readonly description?: string }[];
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components: { readonly schemas: Readonly<Record<string, unknown>>; readonly responses: Readonly<Record<string, ResponseObject>> };
}

/** One documented operation. */
export interface DocumentedOperation {
  readonly path: string;
  /** Upper case, as sent. */
  readonly method: string;
  readonly operation: Operation;
}

/** Every operation, in document order. */
export function operationsOf(document: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    OPENAPI_METHODS.filter((method) => item[method] !== undefined).map((method) => ({ path, method: method.toUpperCase(), operation: item[method] as Operation })),
  );
}

/** The documented methods of `path`, upper case and sorted. */
export function methodsOf(document: OpenApiDocument, path: string): string[] {
  const item = document.paths[path] ?? {};
  return OPENAPI_METHODS.filter((method) => item[method] !== undefined)
    .map((method) => method.toUpperCase())
    .sort();
}

const BASE = 'https://exec-rx.invalid/api/v1/openapi.json';
const pointer = (...segments: readonly string[]): string => segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/** Validates values against schemas of one document. */
export class DocumentValidator {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    // The document's non-schema members, so that strict mode accepts the document as one schema resource.
    this.ajv.addVocabulary(['openapi', 'info', 'tags', 'security', 'paths', 'components']);
    this.ajv.addSchema({ ...document, $id: BASE });
  }

  /** The response documented for `status` of `operation` (following `$ref`), or `undefined`. */
  responseOf(operation: DocumentedOperation, status: number): { readonly response: ResponseObject; readonly at: string } | undefined {
    const entry = operation.operation.responses[String(status)];
    if (entry === undefined) return undefined;
    if ('$ref' in entry) {
      const name = entry.$ref.replace('#/components/responses/', '');
      const response = this.document.components.responses[name];
      return response === undefined ? undefined : { response, at: pointer('components', 'responses', name) };
    }
    return { response: entry, at: pointer('paths', operation.path, operation.method.toLowerCase(), 'responses', String(status)) };
  }

  /** Errors of `value` against the schema of `contentType` in the response at `at`; `[]` when valid. */
  validateContent(at: string, contentType: string, value: unknown): string[] {
    return this.validate(`${BASE}#${at}${pointer('content', contentType, 'schema')}`, value);
  }

  /** The event names the `itemSchema` of the response at `at` documents for `contentType`, one per `oneOf` branch. */
  eventNames(at: string, response: ResponseObject, contentType = 'text/event-stream'): string[] {
    return (response.content?.[contentType]?.itemSchema?.oneOf ?? []).map((branch) => branch.properties?.event?.const ?? `(no event name in ${at})`);
  }

  /**
   * Errors of one SSE event against the `itemSchema` of the response at `at` (its fields, its `event`
   * name one of the branches), then of its parsed `data` against that branch's `contentSchema` (which
   * JSON Schema leaves to the application); `[]` when valid.
   */
  validateEvent(at: string, response: ResponseObject, item: SseItem | BinaryItem, contentType = 'text/event-stream'): string[] {
    const itemAt = `${at}${pointer('content', contentType, 'itemSchema')}`;
    const fields = this.validate(`${BASE}#${itemAt}`, item);
    if (fields.length > 0) return fields;
    const branches = response.content?.[contentType]?.itemSchema?.oneOf ?? [];
    const index = branches.findIndex((branch) => branch.properties?.event?.const === item.event);
    if (index < 0) return [`event "${item.event}" has no branch in itemSchema`];
    // A binary stream's output, ping and notice frames carry no JSON data.
    if (branches[index]?.properties?.data === undefined) return [];
    let data: unknown;
    try {
      data = JSON.parse(item.data ?? '');
    } catch {
      return [`event ${item.event}: data is not JSON`];
    }
    return this.validate(`${BASE}#${itemAt}${pointer('oneOf', String(index), 'properties', 'data', 'contentSchema')}`, data);
  }

  /** Errors of `value` against `#/components/schemas/{name}`; `[]` when valid. */
  validateSchema(name: string, value: unknown): string[] {
    if (this.document.components.schemas[name] === undefined) return [`no schema ${name} in the document`];
    return this.validate(`${BASE}#${pointer('components', 'schemas', name)}`, value);
  }

  private validate(ref: string, value: unknown): string[] {
    let validate = this.compiled.get(ref);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? error.keyword}`);
  }
}
