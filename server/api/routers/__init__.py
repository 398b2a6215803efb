"""One router per resource; ``server.app.create_app`` includes them."""
