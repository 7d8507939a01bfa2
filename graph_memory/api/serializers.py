"""Serializers shared by the assistant's endpoints (views nest their own Input/Output on top of these).

Limits come from `conf` each time a serializer is built, so the schema and
the validation always agree with the settings in force.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from graph_memory import conf
from graph_memory.api.errors import ERROR_CODES
from graph_memory.models import Node


@extend_schema_serializer(component_name="Node")
class NodeOutputSerializer(serializers.Serializer):
    """A node of the connection map as every endpoint shows it."""

    id = serializers.CharField(help_text="Opaque id; says nothing about how many nodes exist.")
    kind = serializers.ChoiceField(choices=Node.Kind.values)
    label = serializers.CharField()


@extend_schema_serializer(component_name="Error")
class ErrorOutputSerializer(serializers.Serializer):
    """The one error shape: {"error": {"code", "message", "field"}}."""

    class Detail(serializers.Serializer):
        code = serializers.ChoiceField(choices=list(ERROR_CODES))
        message = serializers.CharField()
        field = serializers.CharField(allow_null=True)

    error = Detail()


def kind_field(help_text: str) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=Node.Kind.values, required=False, help_text=help_text)


def text_field(help_text: str) -> serializers.CharField:
    """A required, non-blank query text of at most QUERY_MAX_CHARS characters."""
    return serializers.CharField(max_length=int(conf.get("QUERY_MAX_CHARS")), help_text=help_text)


class LimitInputSerializer(serializers.Serializer):
    """`limit`: an integer from 1 to PAGE_MAX; above is a 400 naming "limit", never a silent cut."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["limit"] = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=int(conf.get("PAGE_MAX")),
            help_text=f"Page size, default {conf.get('PAGE_DEFAULT')}.",
        )
        return fields

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs.setdefault("limit", None)
        return attrs


class StrictCharField(serializers.CharField):
    """A string and only a string: DRF's CharField would store `123` as "123" and `true` as "True"."""

    default_error_messages = {"not_a_string": "Must be a string."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class StrictInputSerializer(serializers.Serializer):
    """A JSON body: a key it does not declare is refused, `invalid` naming it, as MCP refuses an unknown argument.

    DRF would drop it silently, and a client that misspelt `origin` would file a note without one.
    """

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = next((key for key in data if key not in self.fields), None)
            if unknown is not None:
                takes = ", ".join(sorted(self.fields))
                raise serializers.ValidationError({unknown: [f"Unknown field {unknown!r}. This body takes: {takes}."]})
        return super().to_internal_value(data)
