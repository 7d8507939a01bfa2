"""The assistant's tool definitions: valid JSON Schema, and only parameters the endpoints really take."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

from accounts.models import Firm, User
from graph_memory.api.tools import DISCIPLINE, endpoints, openai_tools, tool_definitions
from tests.api_support import C014, C088, NW_CP, World, build_world

ABILITIES = {"find_nodes", "walk_neighbors", "get_brief", "search_cases", "check_conflicts"}
ABILITIES |= {"get_memory_index", "open_source", "file_note"}  # issue 17: the index, sources, notes
ABILITIES |= {"ask_documents"}  # issue 18: long documents
# JSON Schema keywords that must say the same as the OpenAPI parameter's schema.
CONSTRAINTS = ("type", "enum", "minimum", "maximum", "minLength", "maxLength")


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def operation_parameters(openapi: dict[str, Any], path: str, method: str = "get") -> dict[str, dict[str, Any]]:
    operation = openapi["paths"][path][method]
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


def test_the_discipline_is_said_once_and_each_description_is_its_own() -> None:
    assert "not authoritative" in DISCIPLINE and "verify" in DISCIPLINE and "live case file" in DISCIPLINE
    assert "may open exists for you" in DISCIPLINE
    descriptions = [tool["description"] for tool in tool_definitions()]
    assert len(set(descriptions)) == len(descriptions)
    for text in descriptions:  # no paragraph repeated in every description
        assert DISCIPLINE not in text and "may open exists for you" not in text, text
    brief = next(t for t in tool_definitions() if t["name"] == "get_brief")
    assert "orientation" in brief["description"] and "never a source" in brief["description"]


def test_each_tool_names_only_its_endpoints_parameters(openapi: dict[str, Any]) -> None:
    calls = endpoints()
    assert set(calls) == ABILITIES
    for tool in tool_definitions():
        call = calls[tool["name"]]
        assert call["method"] in ("GET", "POST") and call["path"] in openapi["paths"], tool["name"]
        params = operation_parameters(openapi, call["path"], call["method"].lower())
        # A POST's body arguments are held to its request body (test_a_post_tools_body_is_its_request_body).
        body = set(tool.get("body", {}).get("properties", ()))
        assert (call["method"] == "POST") == bool(body) and set(call.get("body", [])) == body, tool["name"]
        properties = {k: v for k, v in tool["parameters"]["properties"].items() if k not in body}
        required = set(tool["parameters"]["required"]) - body
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


def _resolved(openapi: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema or len(schema.get("allOf", ())) == 1:  # a described reference is allOf: [one $ref]
        schema = schema["allOf"][0] if "allOf" in schema else schema
        schema = openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema
    return schema


def _same_schema(openapi: dict[str, Any], tool_schema: dict[str, Any], declared: dict[str, Any], where: str) -> None:
    declared = _resolved(openapi, declared)
    for keyword in (*CONSTRAINTS, "maxItems"):
        if keyword in declared or keyword in tool_schema:
            assert tool_schema.get(keyword) == declared.get(keyword), (where, keyword)
    if declared.get("type") == "object" and "properties" in declared:
        assert set(tool_schema["properties"]) == set(declared["properties"]), where
        assert set(tool_schema.get("required", ())) == set(declared.get("required", ())), where
        for name, prop in tool_schema["properties"].items():
            _same_schema(openapi, prop, declared["properties"][name], f"{where}.{name}")
    if declared.get("type") == "array":
        _same_schema(openapi, tool_schema["items"], declared["items"], f"{where}[]")


def test_a_post_tools_body_is_its_request_body(openapi: dict[str, Any]) -> None:
    posts = [t for t in tool_definitions() if t["method"] == "POST"]
    assert [t["name"] for t in posts] == ["file_note"]
    for tool in posts:
        operation = openapi["paths"][tool["path"]]["post"]
        assert operation["requestBody"]["required"] is True
        declared = operation["requestBody"]["content"]["application/json"]["schema"]
        jsonschema.Draft202012Validator.check_schema(tool["body"])
        _same_schema(openapi, tool["body"], declared, tool["name"])
        # The function's arguments are the path parameters plus exactly the body's.
        path_params = set(re.findall(r"{(\w+)}", tool["path"]))
        assert set(tool["parameters"]["properties"]) == path_params | set(tool["body"]["properties"])
        assert {"201", "400", "404", "429", "501"} <= set(operation["responses"])


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
        path = path.replace("{" + key + "}", quote(str(query.pop(key)), safe=""))
    if tool["method"] == "POST":
        return world.client(persona).post(path, data=json.dumps(query), content_type="application/json")
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


def test_the_index_a_source_and_a_note_as_an_assistant_would(world: World) -> None:
    index = call_tool(world, "alice", "get_memory_index", {}).json()
    case_id = index["case_ids"]["2026-014"]
    source = call_tool(world, "alice", "open_source", {"case_id": case_id, "source_id": "document:spa-v3#p2"}).json()
    assert source["source"]["text"].startswith("Clause 9")
    arguments = {"case_id": case_id, "title": "Kept", "text": "Verbatim.", "origin": {"conversation_id": "c1"}}
    filed = call_tool(world, "alice", "file_note", arguments)
    assert filed.status_code == 201 and filed.json()["note"]["text"] == "Verbatim."
    with pytest.raises(jsonschema.ValidationError):
        call_tool(world, "alice", "file_note", {"case_id": case_id, "text": "no title"})
