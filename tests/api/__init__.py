"""The assistant's API and its MCP server (graph_memory/api/)."""
