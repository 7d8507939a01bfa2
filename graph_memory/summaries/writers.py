"""Summary writers behind one interface (`base.Writer`): a model behind the OpenAI API, or no model at all."""

from __future__ import annotations

from graph_memory import conf
from graph_memory.summaries.base import ModelCall, Writer, WriterError, WriterResult, validate_content
from graph_memory.summaries.extractive import ExtractiveWriter
from graph_memory.summaries.openai_writer import OpenAIWriter

__all__ = [
    "ExtractiveWriter",
    "ModelCall",
    "OpenAIWriter",
    "Writer",
    "WriterError",
    "WriterResult",
    "get_writer",
    "validate_content",
]


def get_writer() -> Writer:
    """The configured writer: WRITER "openai", "extractive", or "auto" (openai when a key is set)."""
    choice = conf.get("WRITER")
    if choice == "openai" or (choice == "auto" and conf.openai_api_key()):
        return OpenAIWriter()
    return ExtractiveWriter()
