/**
 * The ids a host accepts for environments and processes, in the executor's registration path and in
 * the operator API's: letters, digits and `._-`, starting with a letter or digit, at most 128
 * characters. One definition for the host, the API's document, the client and the command line.
 */

/** The rule as a pattern (for the OpenAPI document). */
export const SAFE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';

const SAFE_ID = new RegExp(SAFE_ID_PATTERN);

/** Whether `value` is a safe id. */
export const isSafeId = (value: string): boolean => SAFE_ID.test(value);
