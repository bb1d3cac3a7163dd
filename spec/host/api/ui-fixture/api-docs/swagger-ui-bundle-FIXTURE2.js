/*! For license information please see swagger-ui-bundle-FIXTURE2.js.LICENSE.txt */
window.SwaggerUIBundle = function fixture() { return undefined; };
