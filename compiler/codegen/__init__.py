"""C generation: jinja2 environment over codegen_templates/, literals, and the model emitter."""
