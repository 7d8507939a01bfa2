"""The compounding endpoints: file a note into a case, open a cited source, read the memory index.

Thin, like views.py: validate, call one service (notes.py, sources.py,
memory_index.py), shape the output. Hidden and absent cases and sources
answer the one 404 body; a host whose adapter lacks an optional ability
answers `not_supported` (501) before any case is looked up.
"""

from __future__ import annotations

from django.utils.http import parse_etags
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from graph_memory import conf
from graph_memory.adapter import NoteOrigin
from graph_memory.api.errors import error_body
from graph_memory.api.serializers import (
    ErrorOutputSerializer,
    NodeOutputSerializer,
    StrictCharField,
    StrictInputSerializer,
)
from graph_memory.api.views import ERRORS, ORIENTATION, MemoryApi
from graph_memory.consent.exclusions import MemoryExcluded
from graph_memory.services import (
    IDEMPOTENCY_HEADER,
    IDEMPOTENCY_KEY_MAX_CHARS,
    ORIGIN_ID_MAX_CHARS,
    ORIGIN_MAX_MESSAGES,
    NoteCrossesWall,
    NoteInvalid,
    NoteRateLimited,
    memory_index,
    note_file,
    source_get,
)

NOT_SUPPORTED = {501: OpenApiResponse(ErrorOutputSerializer, description="The host's system does not offer this.")}
CROSSES_WALL = {
    409: OpenApiResponse(
        ErrorOutputSerializer,
        description="crosses_wall: the note carries facts of another of the user's cases that not everyone who may "
        "open this case may open; the message names them and that case. memory_excluded: the case is excluded "
        "from the memory (the client's consent). Nothing was filed.",
    )
}


def _case_parameter() -> OpenApiParameter:
    return OpenApiParameter("case_id", str, OpenApiParameter.PATH, description="Opaque node id of the case.")


# --- File a note into a case ---------------------------------------------------------


class CaseNoteFileApi(MemoryApi):
    http_method_names = ["post"]

    @extend_schema_serializer(component_name="NoteInput")
    class InputSerializer(StrictInputSerializer):
        @extend_schema_serializer(component_name="NoteOrigin")
        class OriginSerializer(StrictInputSerializer):
            conversation_id = StrictCharField(
                max_length=ORIGIN_ID_MAX_CHARS,
                required=False,
                allow_blank=True,
                trim_whitespace=False,
                help_text="The assistant's conversation the note comes from.",
            )
            message_ids = serializers.ListField(
                child=StrictCharField(max_length=ORIGIN_ID_MAX_CHARS, trim_whitespace=False),
                max_length=ORIGIN_MAX_MESSAGES, required=False,
                help_text="The messages of that conversation the note keeps.",
            )  # fmt: skip

        def get_fields(self) -> dict[str, serializers.Field]:
            fields = super().get_fields()
            fields["title"] = StrictCharField(
                min_length=1,
                max_length=int(conf.get("NOTE_TITLE_MAX_CHARS")),
                trim_whitespace=False,
                help_text="A short title.",
            )
            fields["text"] = StrictCharField(
                min_length=1,
                max_length=int(conf.get("NOTE_MAX_CHARS")),
                trim_whitespace=False,
                help_text="The note, stored verbatim: the exchange or finding the lawyer chose to keep.",
            )
            fields["origin"] = self.OriginSerializer(required=False, help_text="Where the note comes from.")
            return fields

        def validate_title(self, value: str) -> str:
            if not value.strip():
                raise serializers.ValidationError("This field may not be blank.")
            return value

        def validate_text(self, value: str) -> str:
            return self.validate_title(value)

    @extend_schema_serializer(component_name="FiledNote")
    class OutputSerializer(serializers.Serializer):
        @extend_schema_serializer(component_name="FiledNoteEntry")
        class NoteSerializer(serializers.Serializer):
            id = serializers.CharField(source="source_id", help_text='Its source id, e.g. "note:asst-1f2e3d4c5b6a".')
            case = NodeOutputSerializer()
            title = serializers.CharField()
            text = serializers.CharField()
            origin = serializers.DictField(source="origin_dict")
            assistant_filed = serializers.BooleanField()
            created = serializers.DateTimeField(allow_null=True)

        note = NoteSerializer()
        notice = serializers.CharField()

    @extend_schema(
        operation_id="file_note",
        parameters=[
            _case_parameter(),
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                str,
                OpenApiParameter.HEADER,
                required=False,
                description=f"1 to {IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters naming this filing: sent "
                "again, the first note comes back (200) and nothing more is filed. Without it, the origin's "
                "message ids in this case name the filing.",
            ),
        ],
        request=InputSerializer,
        responses={
            201: OutputSerializer,
            200: OpenApiResponse(OutputSerializer, description="A repeat of an earlier filing: that first note."),
            **ERRORS,
            413: ErrorOutputSerializer,
            **CROSSES_WALL,
            **NOT_SUPPORTED,
        },
        description=(
            "File a note into a case the user may open: stored verbatim as a new working note of the case, "
            "attributed to the user, marked assistant-filed with where it came from. It is never changed "
            "afterwards (a correction is a new note). The case is flagged stale, so its next summary compiles "
            "the note, citing its id. Size-capped and rate-limited per user. A case the user may not open "
            "answers 404 like one that does not exist, and nothing is written. A note carrying facts (party or "
            "case names, case numbers, identifiers, amounts, dates, runs of 8+ words) of another of the user's "
            "cases that someone who may open this case may not is refused with 409 crosses_wall, naming what "
            "matched and from which of the user's cases; a source id the note cites must be a record of this "
            "case (400 naming the field). A case excluded from the memory (the client's consent) refuses every "
            "note with 409 memory_excluded. Filing is idempotent: the same Idempotency-Key header, or without one "
            "the same origin message ids in the same case, returns the first note with 200 and files nothing, "
            "concurrent repeats included. Strict JSON: a repeated key, a field the body does not take, a number "
            "for a text, or nesting deeper than a few levels is 400 invalid naming it; a body over the server's "
            "limit is 413. " + ORIENTATION
        ),
    )
    def post(self, request: Request, case_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        origin = data.get("origin") or {}
        try:
            note = note_file(
                viewer=request.user,
                case_node_id=case_id,
                title=data["title"],
                text=data["text"],
                origin=NoteOrigin(origin.get("conversation_id", ""), tuple(origin.get("message_ids", ()))),
                idempotency_key=request.headers.get(IDEMPOTENCY_HEADER),
            )
        except NoteInvalid as exc:
            raise exceptions.ValidationError({exc.field: [str(exc)]}) from exc
        except NoteRateLimited as exc:
            raise exceptions.Throttled(wait=exc.wait) from exc
        except NoteCrossesWall as exc:
            return Response(error_body("crosses_wall", str(exc), exc.field), status=status.HTTP_409_CONFLICT)
        except MemoryExcluded as exc:
            return Response(error_body("memory_excluded", str(exc)), status=status.HTTP_409_CONFLICT)
        body = {
            "note": {
                "source_id": note.source_id,
                "case": note.case,
                "title": note.title,
                "text": note.text,
                "origin_dict": {
                    "conversation_id": note.origin.conversation_id,
                    "message_ids": list(note.origin.message_ids),
                },
                "assistant_filed": note.assistant_filed,
                "created": note.created,
            },
            "notice": conf.get("NOTICE"),
        }
        return Response(
            self.OutputSerializer(body).data, status=status.HTTP_200_OK if note.replayed else status.HTTP_201_CREATED
        )


# --- Open what a summary cites -------------------------------------------------------


class CaseSourceApi(MemoryApi):
    class InputSerializer(serializers.Serializer):
        def get_fields(self) -> dict[str, serializers.Field]:
            fields = super().get_fields()
            fields["offset"] = serializers.IntegerField(
                required=False, min_value=0, max_value=2**31 - 1, help_text="First character to return, default 0."
            )
            fields["limit"] = serializers.IntegerField(
                required=False,
                min_value=1,
                max_value=int(conf.get("SOURCE_CHARS_MAX")),
                help_text=f"Characters to return, default {conf.get('SOURCE_CHARS_DEFAULT')}.",
            )
            return fields

    @extend_schema_serializer(component_name="CaseSource")
    class OutputSerializer(serializers.Serializer):
        @extend_schema_serializer(component_name="SourceWindow")
        class SourceSerializer(serializers.Serializer):
            id = serializers.CharField()
            kind = serializers.CharField()
            title = serializers.CharField(allow_blank=True)
            date = serializers.CharField(allow_null=True, help_text="ISO 8601, or null.")
            fields = serializers.DictField(help_text="The record's own fields, as the host holds them now.")
            text = serializers.CharField(allow_blank=True, help_text="This window of the record's text.")
            offset = serializers.IntegerField()
            total_chars = serializers.IntegerField(help_text="Length of the whole text, in characters.")
            next_offset = serializers.IntegerField(
                allow_null=True, help_text="Where the next window starts; null at the end."
            )
            truncated = serializers.BooleanField(help_text="More text follows this window.")

        case = NodeOutputSerializer()
        source = SourceSerializer()
        notice = serializers.CharField()

    @extend_schema(
        operation_id="open_source",
        parameters=[
            InputSerializer,
            _case_parameter(),
            OpenApiParameter(
                "source_id",
                str,
                OpenApiParameter.PATH,
                description='A source id a summary cites, e.g. "document:spa-v3#p2" (percent-encode "#" as %23).',
            ),
        ],
        responses={200: OutputSerializer, **ERRORS, **NOT_SUPPORTED},
        description=(
            "Open one source a case summary cites (document:<key>#p<page>, deadline:<key>, invoice:<key>, "
            "note:<key>, draft:<key>, client:<key>, counterparty:<key>, case:header): the record's current text "
            "and fields, read live from the firm's system, so a summary's statement can be checked in one call. "
            "Long texts come in windows of `limit` characters from `offset`, never cut silently: `total_chars` "
            "and `next_offset` say what is left. Only for cases the user may open; any other id answers 404. "
            + ORIENTATION
        ),
    )
    def get(self, request: Request, case_id: str, source_id: str) -> Response:
        data = self.valid(self.InputSerializer, request)
        source = source_get(
            viewer=request.user,
            case_node_id=case_id,
            source_id=source_id,
            offset=data.get("offset", 0),
            limit=data.get("limit"),
        )
        body = {
            "case": source.case,
            "source": {
                "id": source.id,
                "kind": source.kind,
                "title": source.title,
                "date": source.date.isoformat() if source.date else None,
                "fields": source.fields,
                "text": source.text,
                "offset": source.offset,
                "total_chars": source.total_chars,
                "next_offset": source.next_offset,
                "truncated": source.truncated,
            },
        }
        return self.respond(body, self.OutputSerializer)


# --- The memory index ----------------------------------------------------------------


class MemoryIndexApi(MemoryApi):
    # Revalidated by its own client through the ETag; still never kept by a shared cache.
    cache_control = "private, no-cache"

    @extend_schema_serializer(component_name="MemoryIndex")
    class OutputSerializer(serializers.Serializer):
        text = serializers.CharField(help_text="The index: one line per case, at most INDEX_MAX_BYTES bytes of UTF-8.")
        cases = serializers.IntegerField(help_text="Lines (cases) in the index.")
        truncated = serializers.BooleanField(help_text="Some of the user's cases were left out by the size cap.")
        omitted = serializers.IntegerField(help_text="How many of the user's own cases were left out.")
        case_ids = serializers.DictField(
            child=serializers.CharField(), help_text="Reference -> case node id, for the lines shown."
        )
        fingerprint = serializers.CharField(help_text="Changes exactly when the index does; also the ETag.")
        notice = serializers.CharField()

    @extend_schema(
        operation_id="get_memory_index",
        parameters=[
            OpenApiParameter(
                "If-None-Match",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="The ETag of an index already held: 304 without a body if it is still current.",
            )
        ],
        responses={
            200: OutputSerializer,
            304: OpenApiResponse(description="The index has not changed since that ETag."),
            401: ErrorOutputSerializer,
            429: ErrorOutputSerializer,
        },
        description=(
            "A compact index of what the memory holds for the user, for the system prompt: one line per case they "
            "may open, most recently active first, with reference, title, client, counterparties, status, whether "
            "its summary is stale, last activity and the summary's first statement; capped in size, with how many "
            "of the user's cases it leaves out. Send its ETag back as If-None-Match to re-check cheaply (304). "
            + ORIENTATION
        ),
    )
    def get(self, request: Request) -> Response:
        index = memory_index(viewer=request.user)
        held = parse_etags(request.headers.get("If-None-Match", ""))
        if index.etag in held or f"W/{index.etag}" in held or "*" in held:
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": index.etag})
        body = {
            "text": index.text,
            "cases": index.cases,
            "truncated": index.truncated,
            "omitted": index.omitted,
            "case_ids": index.case_ids,
            "fingerprint": index.fingerprint,
        }
        return Response(
            self.OutputSerializer({**body, "notice": conf.get("NOTICE")}).data, headers={"ETag": index.etag}
        )
