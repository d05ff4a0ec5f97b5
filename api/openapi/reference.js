/* global SwaggerUIBundle */
// The reference page's start-up, a file of its own so the page's CSP needs no inline script.
// validatorUrl null: never send the document to validator.swagger.io.
window.ui = SwaggerUIBundle({
  url: document.body.dataset.spec,
  dom_id: '#reference',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
});
