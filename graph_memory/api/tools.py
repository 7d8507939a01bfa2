"""Function-calling tool definitions for the assistant (OpenAI `tools` format).

The descriptions carry the discipline the assistant must keep: what comes
back is orientation compiled from the firm's records for this user, to be
verified against the live file, and anything the user may not see does not
exist for the assistant. Each tool is one GET of the API; its parameters are
that endpoint's path and query parameters, with the same names and limits
(tests/test_api_tools.py holds them to the OpenAPI schema).
"""

from __future__ import annotations

from typing import Any

from graph_memory import conf
from graph_memory.models import Node

DISCIPLINE = (
    "Everything returned is orientation compiled from the firm's own records for the signed-in user, not "
    "authoritative: verify any date, amount, party, deadline or status that matters against the live case file "
    "before relying on it or repeating it as fact. Only what this user may open exists for you: an empty answer "
    "or a not_found error means there is nothing you may use, so never guess at, hint at or ask about anything "
    "that was not returned."
)


def _limit() -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": int(conf.get("PAGE_MAX")),
        "description": f"Page size (default {conf.get('PAGE_DEFAULT')}). When has_more is true, ask again with a larger limit.",
    }


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": int(conf.get("QUERY_MAX_CHARS")), "description": description}


def _kind(description: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(Node.Kind.values), "description": description}


def _node_id() -> dict[str, Any]:
    return {
        "type": "string",
        "description": "An opaque node id, exactly as returned by find_nodes, walk_neighbors, search_cases or check_conflicts.",
    }


def tool_definitions() -> list[dict[str, Any]]:
    """Each tool: name, description, JSON Schema parameters, and the GET request (method, path) that answers it."""
    return [
        {
            "name": "find_nodes",
            "description": (
                "Find lawyers, cases, clients and counterparties by name (ignoring case, accents and punctuation) to "
                "get a node id to start from. Names that start with the text come first. " + DISCIPLINE
            ),
            "method": "GET",
            "path": "/api/memory/nodes/",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": _text("A name or part of one, e.g. 'Northwind' or '2026-014'."),
                    "kind": _kind("Only nodes of this kind."),
                    "limit": _limit(),
                },
                "required": ["q"],
                "additionalProperties": False,
            },
        },
        {
            "name": "walk_neighbors",
            "description": (
                "Walk the firm's connection map one step from a node: who works on a case, which client it is for, "
                "whom it is against; from a lawyer, client or counterparty, the cases they connect to. Each result "
                "names the case its connection belongs to. " + DISCIPLINE
            ),
            "method": "GET",
            "path": "/api/memory/nodes/{node_id}/neighbors/",
            "parameters": {
                "type": "object",
                "properties": {
                    "node_id": _node_id(),
                    "kind": _kind("Only neighbours of this kind."),
                    "limit": _limit(),
                },
                "required": ["node_id"],
                "additionalProperties": False,
            },
        },
        {
            "name": "get_brief",
            "description": (
                "What the memory knows about one node. For a case: its rolling AI-written summary, header facts, "
                "whether it is stale (the case changed after it was written) and when it was written. For a client, "
                "counterparty or lawyer: a brief assembled now from the summaries of the connected cases this user "
                "may open, most recently active first. A brief is orientation to find your way, never a source: "
                "check what matters in the live records. " + DISCIPLINE
            ),
            "method": "GET",
            "path": "/api/memory/nodes/{node_id}/brief/",
            "parameters": {
                "type": "object",
                "properties": {"node_id": _node_id(), "limit": _limit()},
                "required": ["node_id"],
                "additionalProperties": False,
            },
        },
        {
            "name": "search_cases",
            "description": (
                "Find this user's cases by what they are about, by meaning and by words, best first, each with a "
                "snippet of its summary, e.g. 'the commercial lease dispute'. Use it when you do not know a name. "
                "Only relevant cases come back: each hit's `matched` says whether its meaning, its words or both "
                "matched, and `score` runs from 0.5 (just relevant enough) to 1.0 (every word found, or the same "
                "meaning). An empty `results` means no case this user may open is about that. " + DISCIPLINE
            ),
            "method": "GET",
            "path": "/api/memory/search/",
            "parameters": {
                "type": "object",
                "properties": {"q": _text("What the case is about, in plain words."), "limit": _limit()},
                "required": ["q"],
                "additionalProperties": False,
            },
        },
        {
            "name": "check_conflicts",
            "description": (
                "List this user's cases in which a client or counterparty matches a party name, best match first, "
                "with the role the party plays. Each match says how: `exact` (the same name ignoring case, "
                "punctuation, accents and legal forms such as Inc., Corp. or GmbH), `words` (the words you gave are "
                "words of the party's name, e.g. 'Northwind' for 'Northwind Holdings, Inc.'), `reordered` ('Lee, "
                "Jordan' or 'J. Lee' for 'Jordan Lee') or `similar` (a typo away), with a `similarity` from 0 to 1. "
                "Report `words`, `reordered` and `similar` matches as possible conflicts to confirm, not as the same "
                "party. It covers only the cases this user may open, so an empty answer is not a clearance: a "
                "formal conflict check still goes through the firm's conflicts process. " + DISCIPLINE
            ),
            "method": "GET",
            "path": "/api/memory/conflicts/",
            "parameters": {
                "type": "object",
                "properties": {
                    "name": _text("The party's name as written anywhere, e.g. 'Northwind Holdings'."),
                    "limit": _limit(),
                },
                "required": ["name"],
                "additionalProperties": False,
            },
        },
    ]


def openai_tools() -> list[dict[str, Any]]:
    """The definitions in the shape the `openai` client's `tools=` argument takes."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]},
        }
        for t in tool_definitions()
    ]


def endpoints() -> dict[str, dict[str, str]]:
    """How to call each tool: HTTP method and path template (path parameters in braces, the rest as the query)."""
    return {t["name"]: {"method": t["method"], "path": t["path"]} for t in tool_definitions()}
