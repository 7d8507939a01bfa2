"""The assistant's tool definitions: valid JSON Schema, and only parameters the endpoints really take."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

from accounts.models import Firm, User
from graph_memory.api.tools import endpoints, openai_tools, tool_definitions
from tests.api_support import C014, C088, NW_CP, World, build_world

ABILITIES = {"find_nodes", "walk_neighbors", "get_brief", "search_cases", "check_conflicts"}
# JSON Schema keywords that must say the same as the OpenAPI parameter's schema.
CONSTRAINTS = ("type", "enum", "minimum", "maximum", "minLength", "maxLength")


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def operation_parameters(openapi: dict[str, Any], path: str) -> dict[str, dict[str, Any]]:
    operation = openapi["paths"][path]["get"]
    return {p["name"]: p for p in operation.get("parameters", []) if p["in"] in ("path", "query")}


def test_tools_are_openai_function_definitions_with_valid_json_schema() -> None:
    tools = openai_tools()
    assert {t["function"]["name"] for t in tools} == ABILITIES
    for tool in tools:
        assert tool["type"] == "function" and set(tool["function"]) == {"name", "description", "parameters"}
        function = tool["function"]
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", function["name"])
        parameters = function["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])
        assert all(prop.get("description") for prop in parameters["properties"].values()), function["name"]


def test_descriptions_carry_the_discipline() -> None:
    for tool in tool_definitions():
        text = tool["description"]
        assert "not authoritative" in text and "verify" in text and "live case file" in text, tool["name"]
        assert "may open exists for you" in text, tool["name"]
    brief = next(t for t in tool_definitions() if t["name"] == "get_brief")
    assert "orientation" in brief["description"] and "never a source" in brief["description"]


def test_each_tool_names_only_its_endpoints_parameters(openapi: dict[str, Any]) -> None:
    calls = endpoints()
    assert set(calls) == ABILITIES
    for tool in tool_definitions():
        call = calls[tool["name"]]
        assert call["method"] == "GET" and call["path"] in openapi["paths"], tool["name"]
        params = operation_parameters(openapi, call["path"])
        properties, required = tool["parameters"]["properties"], set(tool["parameters"]["required"])
        assert set(properties) <= set(params), (tool["name"], set(properties) - set(params))
        path_params = set(re.findall(r"{(\w+)}", call["path"]))
        assert path_params <= required and path_params == {n for n, p in params.items() if p["in"] == "path"}
        # What the endpoint requires, the tool requires; what the tool leaves out, the endpoint does not need.
        assert {n for n, p in params.items() if p.get("required")} == required, tool["name"]
        for name, prop in properties.items():
            declared = params[name]["schema"]
            for keyword in CONSTRAINTS:
                if keyword == "minLength" and "enum" in declared:
                    continue  # every choice is non-empty anyway
                if keyword in declared or keyword in prop:
                    assert prop.get(keyword) == declared.get(keyword), (tool["name"], name, keyword)


def test_the_tools_endpoint_is_in_the_schema(openapi: dict[str, Any]) -> None:
    operation = openapi["paths"]["/api/memory/tools/"]["get"]
    assert {"200", "401", "429"} <= set(operation["responses"])
    assert "verify" in operation["description"]


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def call_tool(world: World, persona: str, name: str, arguments: dict[str, Any]) -> Any:
    """What an assistant loop does with a tool call: check the arguments, then make the request."""
    tool = next(t for t in tool_definitions() if t["name"] == name)
    jsonschema.validate(arguments, tool["parameters"], cls=jsonschema.Draft202012Validator)
    path, query = tool["path"], dict(arguments)
    for key in re.findall(r"{(\w+)}", path):
        path = path.replace("{" + key + "}", str(query.pop(key)))
    return world.get(persona, path, query)


def test_calling_each_tool_as_an_assistant_would(world: World) -> None:
    found = call_tool(world, "bob", "find_nodes", {"q": "Northwind", "kind": "counterparty"}).json()["results"]
    assert [n["label"] for n in found] == [NW_CP]
    walk = call_tool(world, "bob", "walk_neighbors", {"node_id": found[0]["id"], "limit": 5}).json()
    case = walk["results"][0]["case"]
    brief = call_tool(world, "bob", "get_brief", {"node_id": case["id"]}).json()
    assert brief["cases"][0]["case"] == case and brief["notice"] in brief["text"]
    hits = call_tool(world, "alice", "search_cases", {"q": "lease dispute", "limit": 3}).json()["results"]
    assert [h["case"]["label"] for h in hits] == [C088]
    matches = call_tool(world, "alice", "check_conflicts", {"name": "Northwind Holdings"}).json()["matches"]
    assert [m["case"]["label"] for m in matches] == [C014]
    with pytest.raises(jsonschema.ValidationError):
        call_tool(world, "alice", "find_nodes", {"q": "x", "limit": 101})
    with pytest.raises(jsonschema.ValidationError):
        call_tool(world, "alice", "get_brief", {"id": case["id"]})
