/**
 * Reading the operator API's OpenAPI 3.1 document in specs: its operations, the response it documents
 * for a status and content type, and a JSON Schema 2020-12 validator (ajv) that resolves the document's
 * own `$ref`s.
 */
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv/dist/2020';

/** The methods an OpenAPI path item may hold. */
export const OPENAPI_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface MediaType {
  readonly schema?: unknown;
}
interface ResponseObject {
  readonly description: string;
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
