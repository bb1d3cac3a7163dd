/**
 * The API reference's script (bundled by scripts/build-ui.mjs into dist/ui/api-docs/, served by the host
 * at `/api/v1/docs` after swagger-ui-bundle.js): renders the OpenAPI document the host serves with
 * Swagger UI, read-only.
 *
 * Why Swagger UI (swagger-ui-dist, bundled, no CDN): its CSS is a static file, so the page's CSP keeps
 * `style-src 'self'` (no inline styles); its bundle runs without `eval` or `new Function` (`script-src
 * 'self'` only); it renders OpenAPI 3.2 (our `itemSchema` event streams); it can be made read-only; and
 * it is maintained. Read-only means: `supportedSubmitMethods: []` (no "Try it out" console, so the page
 * never sends a request of the API), no Authorize button and no per-operation lock button (the plugin
 * below renders them as nothing), so the page never asks for an operator token, nor keeps one.
 * `validatorUrl: null`: no badge fetched from swagger.io; every request of the page goes to the host.
 */

/** What `SwaggerUIBundle` takes (the options used here). */
interface SwaggerUiOptions {
  readonly url: string;
  readonly dom_id: string;
  readonly supportedSubmitMethods: readonly string[];
  readonly validatorUrl: null;
  readonly deepLinking: boolean;
  readonly tryItOutEnabled: boolean;
  readonly persistAuthorization: boolean;
  readonly plugins: readonly (() => SwaggerUiPlugin)[];
}

/** A Swagger UI plugin that replaces components: each wrapper gets the original and returns what renders instead. */
interface SwaggerUiPlugin {
  readonly wrapComponents: Readonly<Record<string, () => () => null>>;
}

/** The global swagger-ui-bundle.js defines. */
type SwaggerUiBundle = (options: SwaggerUiOptions) => unknown;

/** The components that would ask for a token (the top Authorize button, the lock of each operation): rendered as nothing. */
const noAuthorization = (): SwaggerUiPlugin => ({
  wrapComponents: {
    authorizeBtn: () => () => null,
    authorizeOperationBtn: () => () => null,
  },
});

const root = document.getElementById('swagger-ui') ?? document.body;
const bundle = (globalThis as unknown as { SwaggerUIBundle?: SwaggerUiBundle }).SwaggerUIBundle;
if (bundle === undefined) {
  const message = document.createElement('p');
  message.setAttribute('role', 'alert');
  message.textContent = 'The API reference could not load its renderer (swagger-ui-bundle.js).';
  root.replaceChildren(message);
} else {
  bundle({
    // Beside this page (`/api/v1/docs` → `/api/v1/openapi.json`), so a proxy's path prefix is kept.
    url: new URL('openapi.json', document.baseURI).href,
    dom_id: '#swagger-ui',
    supportedSubmitMethods: [],
    tryItOutEnabled: false,
    validatorUrl: null,
    deepLinking: true,
    persistAuthorization: false,
    plugins: [noAuthorization],
  });
}

// A module (its names stay its own), bundled as an IIFE.
export {};
