"""Adapters that put toolgate into agent frameworks' own seams for tool calls, one module per
framework, each an optional extra (`pip install "toolgate-client[pydantic-ai]"`): the base client
pulls in none of them (docs/frameworks.md)."""
