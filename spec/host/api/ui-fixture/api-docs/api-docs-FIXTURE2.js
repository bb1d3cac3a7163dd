window.SwaggerUIBundle({ url: "openapi.json" });
