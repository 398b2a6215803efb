// Starts Swagger UI on /docs with FastAPI's usual options, from a file: the docs pages allow
// no inline script. SwaggerUIBundle comes from the installed swagger-ui-bundle.js.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
