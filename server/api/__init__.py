"""The HTTP API: the REST routes (players', operators' and the web page's), their
dependencies, request and response schemas, the one JSON shape of refusals, security headers
and the request body limit. May import the cardroom and everything below it.
"""
