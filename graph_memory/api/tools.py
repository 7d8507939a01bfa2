"""Function-calling tool definitions for the assistant (OpenAI `tools` format).

The descriptions carry the discipline the assistant must keep: what comes
back is orientation compiled from the firm's records for this user, to be
verified against the live file, and anything the user may not see does not
exist for the assistant.
"""

from __future__ import annotations

from typing import Any

from graph_memory import conf

DISCIPLINE = (
    "Results are orientation compiled from the firm's own records for the signed-in user, not authoritative: "
    "verify any date, amount, party or deadline that matters against the live case file before relying on it. "
    "Only cases this user may open exist for you; never guess about, or ask the user about, anything not returned."
)

NODE_KINDS = ["lawyer", "case", "client", "counterparty"]


def _limit() -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": conf.get("PAGE_MAX"),
        "description": f"Page size (default {conf.get('PAGE_DEFAULT')}).",
    }


def _query(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": conf.get("QUERY_MAX_CHARS"), "description": description}


def tool_definitions() -> list[dict[str, Any]]:
    node_id = {"type": "string", "description": "An opaque node id returned by find_nodes, walk_neighbors or search_cases."}
    return [
        {
            "name": "find_nodes",
            "description": "Find lawyers, cases, clients or counterparties by name (case- and accent-insensitive) to get a node id to start from. " + DISCIPLINE,
            "method": "GET",
            "path": "/api/memory/nodes/",
            "parameters": {
                "type": "object",
                "properties": {"q": _query("Name or part of a name."), "kind": {"type": "string", "enum": NODE_KINDS}, "limit": _limit()},
                "required": ["q"],
                "additionalProperties": False,
            },
        },
        {
            "name": "walk_neighbors",
            "description": "Walk the firm's connection map one step from a node: who works on a case, which client it is for, whom it is against. " + DISCIPLINE,
            "method": "GET",
            "path": "/api/memory/nodes/{id}/neighbors/",
            "parameters": {
                "type": "object",
                "properties": {"id": node_id, "kind": {"type": "string", "enum": NODE_KINDS, "description": "Only neighbours of this kind."}, "limit": _limit()},
                "required": ["id"],
                "additionalProperties": False,
            },
        },
        {
            "name": "get_brief",
            "description": "A case's rolling summary, or a client's, counterparty's or lawyer's brief stitched from the summaries of the cases this user may open. Summaries are AI-written orientation and may be stale. " + DISCIPLINE,
            "method": "GET",
            "path": "/api/memory/nodes/{id}/brief/",
            "parameters": {
                "type": "object",
                "properties": {"id": node_id},
                "required": ["id"],
                "additionalProperties": False,
            },
        },
        {
            "name": "search_cases",
            "description": "Find this user's cases by meaning and by words, best first, e.g. 'the commercial lease dispute'. " + DISCIPLINE,
            "method": "GET",
            "path": "/api/memory/search/",
            "parameters": {
                "type": "object",
                "properties": {"q": _query("What the case is about."), "limit": _limit()},
                "required": ["q"],
                "additionalProperties": False,
            },
        },
        {
            "name": "check_conflicts",
            "description": "List this user's cases in which a client or counterparty matches a party name (ignoring case, punctuation, accents and legal-form suffixes such as Inc. or GmbH), with the role the party plays. A clear result covers only what this user may open; a formal conflict check still goes through the firm's conflicts process. " + DISCIPLINE,
            "method": "GET",
            "path": "/api/memory/conflicts/",
            "parameters": {
                "type": "object",
                "properties": {"name": _query("The party's name.")},
                "required": ["name"],
                "additionalProperties": False,
            },
        },
    ]


def openai_tools() -> list[dict[str, Any]]:
    """The definitions in the shape the `openai` client's `tools=` argument takes."""
    return [
        {"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}}
        for t in tool_definitions()
    ]


def endpoints() -> dict[str, dict[str, str]]:
    """How to call each tool: HTTP method and path template (path parameters in braces)."""
    return {t["name"]: {"method": t["method"], "path": t["path"]} for t in tool_definitions()}
