"""SageMaker data capture read into requests: when each one arrived, its prompt and output tokens.

Data capture writes one JSON line per request to ``s3://<destination>/<endpoint>/<variant>/yyyy/mm/dd/hh/*.jsonl``:
``captureData.endpointInput`` and ``captureData.endpointOutput`` (each ``observedContentType``, ``mode``,
``data``, ``encoding``: ``JSON``, ``CSV`` or ``BASE64``) and ``eventMetadata`` (``eventId``, ``inferenceTime``)
("Capture data from real-time endpoint", Amazon SageMaker AI developer guide, *View Captured Data*). Without a
``CaptureContentTypeHeader`` SageMaker base64-encodes what it captures (``DataCaptureConfig``, API reference).

Token counts come from what the model server counted when the response carries it (OpenAI-style
``usage.prompt_tokens`` / ``usage.completion_tokens``, TGI and LMI ``details.generated_tokens``, also in the
last event of a streamed response), else from the text at :data:`CHARS_PER_TOKEN` characters per token, else
(the payload was not captured or cannot be decoded) from a stated profile. Every line that is not a capture
record is counted by reason and skipped; its content is never repeated in a message.

Pure Python: the S3 reading is :mod:`fastscale.infra.aws.traffic`'s.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastscale.infra.analysis.endpoint_traffic.window import Window
from fastscale.infra.base.limits import MAX_REQUEST_TOKENS

#: Characters per token when a payload's tokens are estimated from its text: OpenAI's rule of thumb for
#: English text ("one token generally corresponds to ~4 characters", OpenAI help center, "What are tokens and
#: how to count them"). Code, other languages and JSON-heavy prompts have fewer characters per token.
CHARS_PER_TOKEN = 4.0

#: How a count was obtained.
COUNTED, ESTIMATED, ASSUMED = "counted by the server", f"estimated at {CHARS_PER_TOKEN:g} characters per token", "assumed"
HOW = (COUNTED, ESTIMATED, ASSUMED)


class TrafficInputError(ValueError):
    """A command-line value for reading a live endpoint's traffic that cannot be used (exit code 2); ``option``
    names the option at fault."""

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class TokenProfile:
    """Prompt and output tokens of a request whose payload does not tell (and of every request of a trace
    built from metrics)."""

    prompt: int
    output: int
    source: str

    def describe(self) -> str:
        return f"{self.prompt} prompt and {self.output} output tokens ({self.source})"


#: fastscale's choice, not a measurement: a chat request of a few paragraphs and a one-paragraph answer.
DEFAULT_TOKENS = TokenProfile(1000, 250, "fastscale's default, an assumption: give --tokens PROMPT:OUTPUT")


def parse_tokens(text: str) -> TokenProfile:
    """``--tokens PROMPT:OUTPUT`` (whole numbers, each at least 1 and at most :data:`MAX_REQUEST_TOKENS`)."""
    head, colon, tail = text.strip().partition(":")
    try:
        prompt, output = int(head), int(tail)
    except ValueError:
        raise TrafficInputError(f"{text!r} is not PROMPT:OUTPUT tokens, e.g. 1000:250", "--tokens") from None
    if not colon or not (1 <= prompt <= MAX_REQUEST_TOKENS and 1 <= output <= MAX_REQUEST_TOKENS):
        raise TrafficInputError(f"{text!r}: give PROMPT:OUTPUT, both whole numbers of tokens from 1 to "
                                f"{MAX_REQUEST_TOKENS:,}, e.g. 1000:250", "--tokens")
    return TokenProfile(prompt, output, "--tokens")


def split_lines(chunks: Iterable[bytes], max_line: int) -> Iterator[bytes | None]:
    """The lines of a stream of byte chunks, without their line ending; ``None`` for a line longer than
    ``max_line`` bytes, whose bytes are dropped as they arrive (memory stays bounded whatever the file)."""
    pending = bytearray()
    too_long = False
    for chunk in chunks:
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if not too_long:
                pending += piece
                if len(pending) > max_line:
                    too_long = True
                    pending.clear()
            if nl < 0:
                break
            yield None if too_long else bytes(pending).rstrip(b"\r")
            pending.clear()
            too_long = False
            start = nl + 1
    if too_long:
        yield None
    elif pending:
        yield bytes(pending).rstrip(b"\r")


# --------------------------------------------------------------------------------------------- one record


@dataclass(frozen=True)
class _Payload:
    text: str
    parsed: Any  # the JSON document, or None
    events: tuple[Any, ...]  # the JSON documents of a streamed (server-sent events) response


_UNDECODABLE = "undecodable"


def _payload(part: Any) -> _Payload | str | None:
    """One side of a capture: None when it was not captured, "undecodable" when its data cannot be read."""
    if not isinstance(part, dict):
        return None
    data = part.get("data")
    if not isinstance(data, str):
        return _UNDECODABLE
    if str(part.get("encoding", "")).upper() == "BASE64":
        try:
            text = base64.b64decode(data, validate=True).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError):
            return _UNDECODABLE
    else:
        text = data
    stripped = text.lstrip()
    parsed = None
    if stripped[:1] in ("{", "["):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
    events: list[Any] = []
    if parsed is None and stripped.startswith("data:"):
        for line in stripped.splitlines():
            body = line[5:].strip() if line.startswith("data:") else ""
            if body and body != "[DONE]":
                try:
                    events.append(json.loads(body))
                except ValueError:
                    continue
    return _Payload(text, parsed, tuple(events))


def _strings(value: Any) -> Iterator[str]:
    """The text in a prompt-like value: a string, a list of strings, or chat parts ({"text": ...})."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                yield item
            elif isinstance(item, dict):
                yield from _strings(item.get("text", item.get("content")))
    elif isinstance(value, dict):
        yield from _strings(value.get("text", value.get("content")))


#: Request fields that hold the prompt: OpenAI chat (`messages`) and completions (`prompt`), Hugging Face /
#: TGI / LMI (`inputs`), and others' spellings.
_PROMPT_FIELDS = ("prompt", "inputs", "input", "text_inputs", "text")


def _prompt_chars(request: _Payload) -> int:
    doc = request.parsed
    if isinstance(doc, dict):
        if isinstance(doc.get("messages"), list):
            return sum(len(s) for m in doc["messages"] if isinstance(m, dict) for s in _strings(m.get("content")))
        for key in _PROMPT_FIELDS:
            if key in doc:
                return sum(len(s) for s in _strings(doc[key]))
    return len(request.text)


def _count(value: Any) -> int | None:
    """A token count the server reported, or None (then estimated) when it is not one: not a whole number,
    negative, or past :data:`MAX_REQUEST_TOKENS`, which no real response counts."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_REQUEST_TOKENS:
        return value
    return None


def _usage(doc: Any) -> tuple[int | None, int | None]:
    """(prompt tokens, output tokens) the server counted in one response document."""
    prompt = output = None
    items = doc if isinstance(doc, list) else [doc]
    for item in items:
        if not isinstance(item, dict):
            continue
        usage = item.get("usage")
        if isinstance(usage, dict):
            prompt = _count(usage.get("prompt_tokens", usage.get("input_tokens"))) if prompt is None else prompt
            output = _count(usage.get("completion_tokens", usage.get("output_tokens"))) if output is None else output
        details = item.get("details")
        if output is None and isinstance(details, dict):
            output = _count(details.get("generated_tokens"))
    return prompt, output


def _response_chars(response: _Payload) -> int:
    docs = [response.parsed] if response.parsed is not None else list(response.events)
    if not docs:
        return len(response.text)
    texts: list[str] = []
    for doc in docs:
        for item in doc if isinstance(doc, list) else [doc]:
            if not isinstance(item, dict):
                continue
            if isinstance(item.get("generated_text"), str) and not response.events:
                texts.append(item["generated_text"])
            for choice in item.get("choices") or []:
                if isinstance(choice, dict):
                    for part in (choice.get("message"), choice.get("delta")):
                        if isinstance(part, dict):
                            texts += _strings(part.get("content"))
                    if isinstance(choice.get("text"), str):
                        texts.append(choice["text"])
            token = item.get("token")
            if isinstance(token, dict) and isinstance(token.get("text"), str) and not token.get("special"):
                texts.append(token["text"])
    return sum(len(t) for t in texts) if texts else len(response.text)


def _estimate(chars: int) -> int:
    return max(1, round(chars / CHARS_PER_TOKEN))


def _time(value: Any) -> tuple[datetime, bool] | None:
    """``inferenceTime`` (ISO 8601, UTC) and whether it has a fraction of a second."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when, when.microsecond != 0 or "." in value


def _tokens(counted: int | None, side: _Payload | str | None, chars: Any, default: int) -> tuple[int, str]:
    """One side's tokens and how they were found: counted by the server, else estimated from the side's text,
    else (not captured, or undecodable) the default."""
    if counted is not None:
        return counted, COUNTED
    if isinstance(side, _Payload):
        return _estimate(chars(side)), ESTIMATED
    return default, ASSUMED


@dataclass(frozen=True)
class CaptureRecord:
    at: float  # POSIX seconds, UTC
    fraction: bool  # the time had a fraction of a second
    prompt: int
    output: int
    prompt_how: str
    output_how: str


def parse_record(line: bytes, default: TokenProfile) -> CaptureRecord | str:
    """One line of a capture file as a request, or the reason it is not one."""
    try:
        doc = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return "not JSON"
    if not isinstance(doc, dict) or not isinstance(doc.get("captureData"), dict):
        return "no captureData"
    meta = doc.get("eventMetadata")
    timed = _time(meta.get("inferenceTime")) if isinstance(meta, dict) else None
    if timed is None:
        return "no readable eventMetadata.inferenceTime"
    capture = doc["captureData"]
    request, response = _payload(capture.get("endpointInput")), _payload(capture.get("endpointOutput"))
    counted_prompt, counted_output = _usage(response.parsed) if isinstance(response, _Payload) else (None, None)
    if isinstance(response, _Payload) and counted_output is None and response.events:
        for event in response.events:  # a streamed response counts in its last events
            p, o = _usage(event)
            counted_prompt = p if p is not None else counted_prompt
            counted_output = o if o is not None else counted_output
    prompt, prompt_how = _tokens(counted_prompt, request, _prompt_chars, default.prompt)
    output, output_how = _tokens(counted_output, response, _response_chars, default.output)
    when, fraction = timed
    return CaptureRecord(when.timestamp(), fraction, prompt, output, prompt_how, output_how)


# --------------------------------------------------------------------------------------------- many records


@dataclass
class CaptureTally:
    """What was read from the capture files: the requests in the window, as columns, and what was skipped."""

    window: Window
    default: TokenProfile
    at: list[float] = field(default_factory=list)
    prompt: list[int] = field(default_factory=list)
    output: list[int] = field(default_factory=list)
    #: how each request's prompt and output tokens were obtained: an index into HOW
    prompt_how: bytearray = field(default_factory=bytearray)
    output_how: bytearray = field(default_factory=bytearray)
    fraction: bool = False  # some inferenceTime had a fraction of a second
    lines: int = 0
    outside: int = 0  # records outside the window
    skipped: Counter[str] = field(default_factory=Counter)
    #: reason -> (file, line) of its first occurrence, to look at; never the line's content
    first_skipped: dict[str, tuple[str, int]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.at)

    def read(self, lines: Iterable[bytes | None], source: str, max_line: int) -> None:
        """Every line of one capture file; a line over ``max_line`` bytes comes as None and is skipped."""
        start, end = self.window.start.timestamp(), self.window.end.timestamp()
        for number, line in enumerate(lines, 1):
            if line is not None and not line.strip():
                continue
            self.lines += 1
            record = parse_record(line, self.default) if line is not None else f"longer than {max_line} bytes"
            if isinstance(record, str):
                self.skipped[record] += 1
                self.first_skipped.setdefault(record, (source, number))
                continue
            if not start <= record.at < end:
                self.outside += 1
                continue
            self.at.append(record.at)
            self.prompt.append(record.prompt)
            self.output.append(record.output)
            self.prompt_how.append(HOW.index(record.prompt_how))
            self.output_how.append(HOW.index(record.output_how))
            self.fraction = self.fraction or record.fraction

    def cut(self, before: float) -> None:
        """Drop the requests at or after ``before`` (POSIX seconds): what a read cap left incomplete."""
        keep = [i for i, a in enumerate(self.at) if a < before]
        if len(keep) == len(self.at):
            return
        self.at[:] = [self.at[i] for i in keep]
        self.prompt[:] = [self.prompt[i] for i in keep]
        self.output[:] = [self.output[i] for i in keep]
        self.prompt_how = bytearray(self.prompt_how[i] for i in keep)
        self.output_how = bytearray(self.output_how[i] for i in keep)

    def how(self, which: str) -> dict[str, int]:
        """How the requests' ``prompt`` or ``output`` tokens were obtained: HOW entry -> requests."""
        codes = self.prompt_how if which == "prompt" else self.output_how
        return {HOW[code]: n for code, n in sorted(Counter(codes).items())}

    def skipped_summary(self) -> str | None:
        if not self.skipped:
            return None
        parts = []
        for reason, n in self.skipped.most_common():
            where, line = self.first_skipped[reason]
            parts.append(f"{n} {reason} (first: {where}, line {line})")
        total = sum(self.skipped.values())
        return f"{total} of {self.lines} captured lines skipped: " + "; ".join(parts)
