"""What a model says about its answer besides the answer: grounding, citations, log probs.

Both providers hand these to :class:`~adk_rx.models.LlmResponse`, and the LLM step copies
them onto the model's event, so they are emitted, stored and shown like its content.
A streamed call collects them with :class:`ResponseMetadata`: Gemini sends grounding in the
last chunk, citations and log probabilities per chunk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.genai import types

__all__ = [
    "ResponseMetadata",
    "average_logprob",
    "candidate_fields",
    "citations_from_openai",
    "grounding_sources",
    "logprobs_from_openai",
]


class ResponseMetadata:
    """The metadata of a streamed call, gathered chunk by chunk."""

    __slots__ = ("_chosen", "_citations", "_top", "avg_logprobs", "grounding_metadata")

    def __init__(self) -> None:
        self.grounding_metadata: types.GroundingMetadata | None = None
        self.avg_logprobs: float | None = None
        self._citations: list[types.Citation] = []
        self._chosen: list[types.LogprobsResultCandidate] = []
        self._top: list[types.LogprobsResultTopCandidates] = []

    def add_candidate(self, candidate: types.Candidate) -> None:
        """Takes the metadata of one Gemini chunk's candidate."""
        if candidate.grounding_metadata is not None:
            self.grounding_metadata = candidate.grounding_metadata
        if candidate.avg_logprobs is not None:
            self.avg_logprobs = candidate.avg_logprobs
        self.add_citations(candidate.citation_metadata)
        self.add_logprobs(candidate.logprobs_result)

    def add_citations(self, metadata: types.CitationMetadata | None) -> None:
        """Adds the citations of one chunk (a citation repeated by a later chunk is kept once)."""
        if metadata is None or not metadata.citations:
            return
        for citation in metadata.citations:
            if citation not in self._citations:
                self._citations.append(citation)

    def add_logprobs(self, result: types.LogprobsResult | None) -> None:
        """Appends one chunk's token log probabilities."""
        if result is None:
            return
        self._chosen.extend(result.chosen_candidates or ())
        self._top.extend(result.top_candidates or ())

    def fields(self) -> dict[str, Any]:
        """The LlmResponse fields for the whole stream (only those that were seen)."""
        out: dict[str, Any] = {}
        if self.grounding_metadata is not None:
            out["grounding_metadata"] = self.grounding_metadata
        if self._citations:
            out["citation_metadata"] = types.CitationMetadata(citations=list(self._citations))
        if self._chosen or self._top:
            out["logprobs_result"] = types.LogprobsResult(
                chosen_candidates=list(self._chosen) or None, top_candidates=list(self._top) or None
            )
            if self.avg_logprobs is None and self._chosen:
                self.avg_logprobs = _average(self._chosen)
        if self.avg_logprobs is not None:
            out["avg_logprobs"] = self.avg_logprobs
        return out


def candidate_fields(candidate: types.Candidate) -> dict[str, Any]:
    """The metadata LlmResponse fields of one (non-streamed) Gemini candidate."""
    metadata = ResponseMetadata()
    metadata.add_candidate(candidate)
    return metadata.fields()


def logprobs_from_openai(logprobs: Any) -> types.LogprobsResult | None:
    """A chat-completions ``choice.logprobs`` as google-genai's LogprobsResult.

    ``{"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]}``; anything
    of another shape is ignored (servers differ and log probabilities are advisory).
    """
    entries = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(entries, Sequence) or isinstance(entries, str) or not entries:
        return None
    chosen: list[types.LogprobsResultCandidate] = []
    top: list[types.LogprobsResultTopCandidates] = []
    for entry in entries:
        candidate = _openai_candidate(entry)
        if candidate is None:
            continue
        chosen.append(candidate)
        alternatives = entry.get("top_logprobs") if isinstance(entry, Mapping) else None
        if isinstance(alternatives, Sequence) and alternatives:
            top.append(
                types.LogprobsResultTopCandidates(
                    candidates=[c for a in alternatives if (c := _openai_candidate(a)) is not None]
                )
            )
    if not chosen:
        return None
    return types.LogprobsResult(chosen_candidates=chosen, top_candidates=top or None)


def citations_from_openai(annotations: Any) -> types.CitationMetadata | None:
    """The ``url_citation`` annotations of a chat-completions message as CitationMetadata."""
    if not isinstance(annotations, Sequence) or isinstance(annotations, str):
        return None
    citations: list[types.Citation] = []
    for annotation in annotations:
        cited = annotation.get("url_citation") if isinstance(annotation, Mapping) else None
        if not isinstance(cited, Mapping) or not isinstance(cited.get("url"), str):
            continue
        citations.append(
            types.Citation(
                uri=cited["url"],
                title=cited.get("title") if isinstance(cited.get("title"), str) else None,
                start_index=_int_or_none(cited.get("start_index")),
                end_index=_int_or_none(cited.get("end_index")),
            )
        )
    return types.CitationMetadata(citations=citations) if citations else None


def average_logprob(result: types.LogprobsResult | None) -> float | None:
    """The mean log probability of the chosen tokens (None without any)."""
    if result is None or not result.chosen_candidates:
        return None
    return _average(result.chosen_candidates)


def grounding_sources(metadata: types.GroundingMetadata | None) -> list[tuple[str, str]]:
    """``(title, uri)`` of each web or retrieved source a grounded answer cites, in order."""
    if metadata is None or not metadata.grounding_chunks:
        return []
    sources: list[tuple[str, str]] = []
    for chunk in metadata.grounding_chunks:
        source = chunk.web or chunk.retrieved_context
        if source is None or not source.uri:
            continue
        pair = (source.title or source.uri, source.uri)
        if pair not in sources:
            sources.append(pair)
    return sources


def _openai_candidate(entry: Any) -> types.LogprobsResultCandidate | None:
    if not isinstance(entry, Mapping):
        return None
    token, logprob = entry.get("token"), entry.get("logprob")
    if not isinstance(token, str) or not isinstance(logprob, int | float):
        return None
    return types.LogprobsResultCandidate(token=token, log_probability=float(logprob))


def _average(candidates: Sequence[types.LogprobsResultCandidate]) -> float | None:
    values = [c.log_probability for c in candidates if c.log_probability is not None]
    return sum(values) / len(values) if values else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
