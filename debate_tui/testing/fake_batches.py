"""OpenAI's and Azure's files and batches endpoints for the fake server, so provider batches are tested offline.

    POST /v1/files (multipart, purpose=batch)   GET /v1/files/{id}   GET /v1/files/{id}/content
    POST /v1/batches   GET /v1/batches   GET /v1/batches/{id}   POST /v1/batches/{id}/cancel

Azure serves the same under `/openai/...?api-version=V` (litellm's AzureOpenAI
client, key in the `api-key` header) or `/openai/v1/...` (its v1 API, when the
api version is "v1", "latest" or "preview": key as a bearer token). Both are
routed to the same jobs by their path without the prefix; an Azure request
without a key is refused with Azure's 401 (the key is never echoed), one
without an api version with a 404, and an Azure job's `endpoint` must be
`/chat/completions`, without OpenAI's `/v1`. Every job's lines must name its
endpoint as their `url`, or the job fails validation, as on both providers.

A job moves validating -> in_progress -> finalizing -> completed, one step
every `step_s` seconds of its age, on the server's clock (`time.monotonic`).
Each request line is answered by the server's own rules (the same `add_rule`
scripting as live calls): a rule with a fault or an error puts the line in
the job's error file instead of its output. The output file lists its lines
in reverse input order, as providers do not keep the order. Scripting:

    server.batches.step_s = 0.5         # a slow job
    server.batches.expire_next = 1      # the next job expires: half its lines in the output, the rest in the error file
    server.batches.fail_next = 1        # the next job fails validation (status "failed", no output)
    server.batches.refuse_next = 1      # the next job creation is refused with a 500 (its upload is kept)

`submitted` counts every request line the server accepted into a job;
`submitted_ids` lists their custom_ids, so a test can prove none was sent twice;
`api_versions` holds the api versions Azure requests asked for.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Answer = tuple[int, bytes, str]
"""HTTP status, body, content type."""
Line = Callable[[dict[str, Any]], tuple[dict[str, Any] | None, dict[str, Any] | None]]
"""Answers one request body: (chat completion payload, None) or (None, error object)."""

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
STEPS = ("validating", "in_progress", "finalizing", "completed")
_BOUNDARY = re.compile(r'boundary="?([^";]+)"?')
AZURE_ENDPOINTS = ("/chat/completions", "/embeddings")
"""The `endpoint` values Azure's (non-v1) batches API takes."""
AZURE_DENIED = ("Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid "
                "key for an active subscription and use a correct regional API endpoint for your resource.")


@dataclass
class _Job:
    ident: str
    input_file_id: str
    endpoint: str
    created: float
    lines: list[dict[str, Any]]
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    expires: bool = False


class FakeBatches:
    """Files and batch jobs in memory; thread-safe, since tests read counts from their own thread."""

    def __init__(self, answer: Line) -> None:
        self.answer = answer
        self.step_s = 0.0
        """Seconds a job spends in each of validating, in_progress and finalizing."""
        self.expire_next = 0
        """How many of the next jobs expire instead of finalizing."""
        self.fail_next = 0
        """How many of the next jobs fail validation."""
        self.refuse_next = 0
        """How many of the next job creations are refused with a 500: an outage between upload and create."""
        self.files: dict[str, tuple[str, bytes]] = {}
        self.jobs: dict[str, _Job] = {}
        self.submitted = 0
        self.submitted_ids: list[str] = []
        self.api_versions: set[str] = set()
        self._ids = itertools.count(1)
        self._lock = threading.RLock()

    def reset(self) -> None:
        with self._lock:
            self.__init__(self.answer)  # type: ignore[misc]

    # -- routing ---------------------------------------------------------

    def respond(self, method: str, path: str, headers: dict[str, str], body: bytes,
                query: str = "") -> Answer | None:
        """The answer to a files or batches request, or None when the path is not one of theirs.

        OpenAI's `/v1/...` and Azure's `/openai/...` and `/openai/v1/...` are one
        route once the prefix is gone; Azure's own rules are checked first.
        """
        parts = path.strip("/").split("/")
        azure = parts[:1] == ["openai"]
        parts = parts[azure:]
        azure_v1 = azure and parts[:1] == ["v1"]
        parts = parts[1:] if parts[:1] == ["v1"] else parts
        if parts[:1] not in (["files"], ["batches"]):
            return None
        with self._lock:
            if azure and (refused := self._azure_refusal(headers, query, v1=azure_v1)):
                return refused
            if parts == ["files"] and method == "POST":
                return self._upload(headers, body)
            if len(parts) >= 2 and parts[0] == "files" and method == "GET":
                return self._file(parts[1], content=parts[2:] == ["content"])
            if parts == ["batches"] and method == "POST":
                return self._create(body, AZURE_ENDPOINTS if azure and not azure_v1 else None)
            if parts == ["batches"] and method == "GET":
                return _json(200, {"object": "list", "data": [self._view(j) for j in self.jobs.values()],
                                   "has_more": False})
            if len(parts) == 2 and parts[0] == "batches" and method == "GET":
                return self._retrieve(parts[1])
            if len(parts) == 3 and parts[0] == "batches" and parts[2] == "cancel" and method == "POST":
                return self._cancel(parts[1])
        return None

    def _azure_refusal(self, headers: dict[str, str], query: str, *, v1: bool) -> Answer | None:
        """Azure's answer to a request without a key (or, before its v1 API, without an api version)."""
        key = headers.get("api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not key:
            return _error(401, AZURE_DENIED)
        version = urllib.parse.parse_qs(query).get("api-version", [""])[0]
        if not v1 and not version:
            return _error(404, "Resource not found: the api-version query parameter is missing")
        self.api_versions.add(version or "v1")
        return None

    # -- files -----------------------------------------------------------

    def _upload(self, headers: dict[str, str], body: bytes) -> Answer:
        fields = _multipart(headers.get("content-type", ""), body)
        if fields.get("purpose", (b"", ""))[0] != b"batch" or "file" not in fields:
            return _error(400, "expected multipart fields purpose=batch and file")
        data, name = fields["file"]
        ident = f"file-fake-{next(self._ids)}"
        self.files[ident] = (name or "input.jsonl", data)
        return _json(200, self._file_view(ident))

    def _file_view(self, ident: str) -> dict[str, Any]:
        name, data = self.files[ident]
        return {"id": ident, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": name, "purpose": "batch", "status": "processed"}

    def _file(self, ident: str, *, content: bool) -> Answer:
        for job in self.jobs.values():
            self._advance(job)
        if ident not in self.files:
            return _error(404, f"no such file: {ident}")
        if content:
            return 200, self.files[ident][1], "application/octet-stream"
        return _json(200, self._file_view(ident))

    def _store(self, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        ident = f"file-fake-{next(self._ids)}"
        self.files[ident] = ("output.jsonl", "".join(json.dumps(line) + "\n" for line in lines).encode())
        return ident

    # -- jobs ------------------------------------------------------------

    def _create(self, body: bytes, endpoints: tuple[str, ...] | None) -> Answer:
        """A job from an uploaded file; `endpoints`: the only `endpoint` values taken (None: any)."""
        try:
            spec = json.loads(body)
            source = self.files[spec["input_file_id"]][1]
            lines = [json.loads(raw) for raw in source.decode().splitlines() if raw.strip()]
        except (ValueError, KeyError, TypeError) as exc:
            return _error(400, f"bad batch request: {exc!r}")
        if self.refuse_next > 0:
            self.refuse_next -= 1
            return _error(500, "fake outage: the batch was not created")
        endpoint = spec.get("endpoint", "")
        if endpoints is not None and endpoint not in endpoints:
            return _error(400, f"endpoint {endpoint!r} is not supported here; use one of {', '.join(endpoints)}")
        job = _Job(f"batch_fake_{next(self._ids)}", spec["input_file_id"], endpoint, time.monotonic(), lines)
        if self.expire_next > 0:
            self.expire_next -= 1
            job.expires = True
        stray = next((n for n, line in enumerate(lines, 1) if line.get("url") != endpoint), None)
        if stray is not None:
            job.status = "failed"
            job.errors = [{"code": "invalid_url", "line": stray,
                           "message": f"the url of this request does not match the batch's endpoint {endpoint}"}]
        elif self.fail_next > 0:
            self.fail_next -= 1
            job.status = "failed"
            job.errors = [{"code": "invalid_request", "message": "fake validation failure", "line": 1}]
        else:
            self.submitted += len(lines)
            self.submitted_ids += [str(line.get("custom_id")) for line in lines]
        self.jobs[job.ident] = job
        return _json(200, self._view(job))

    def _retrieve(self, ident: str) -> Answer:
        job = self.jobs.get(ident)
        if job is None:
            return _error(404, f"no such batch: {ident}")
        self._advance(job)
        return _json(200, self._view(job))

    def _cancel(self, ident: str) -> Answer:
        job = self.jobs.get(ident)
        if job is None:
            return _error(404, f"no such batch: {ident}")
        if job.status not in TERMINAL:
            self._finish(job, "cancelled", done=0)
        return _json(200, self._view(job))

    def _advance(self, job: _Job) -> None:
        """Move the job along by its age; it is answered all at once when it reaches finalizing."""
        if job.status in TERMINAL:
            return
        age = time.monotonic() - job.created
        step = min(int(age / self.step_s) if self.step_s > 0 else len(STEPS), len(STEPS) - 1)
        if job.expires and STEPS[step] in ("finalizing", "completed"):
            self._finish(job, "expired", done=len(job.lines) // 2)
        elif STEPS[step] == "completed":
            self._finish(job, "completed", done=len(job.lines))
        else:
            job.status = STEPS[step]

    def _finish(self, job: _Job, status: str, *, done: int) -> None:
        """Answer the first `done` lines; the rest go to the error file as expired or cancelled."""
        output: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for index, line in enumerate(job.lines):
            custom_id = line.get("custom_id")
            if index >= done:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                errors.append(_error_line(custom_id, code, f"this request was not run: the job was {status}"))
                continue
            payload, error = self.answer(line.get("body") or {})
            if payload is not None:
                output.append({"id": f"batch_req_{next(self._ids)}", "custom_id": custom_id, "error": None,
                               "response": {"status_code": 200, "request_id": f"req_{index}", "body": payload}})
            else:
                errors.append(_error_line(custom_id, "server_error", str((error or {}).get("message"))))
        output.reverse()  # providers do not keep the input's order
        job.output_file_id = self._store(output)
        job.error_file_id = self._store(errors)
        job.status = status

    def _view(self, job: _Job) -> dict[str, Any]:
        lines = len(job.lines)
        failed = 0 if job.status not in TERMINAL else len(self._lines(job.error_file_id))
        completed = len(self._lines(job.output_file_id))
        return {
            "id": job.ident, "object": "batch", "endpoint": job.endpoint, "input_file_id": job.input_file_id,
            "completion_window": "24h", "status": job.status, "output_file_id": job.output_file_id,
            "error_file_id": job.error_file_id, "created_at": int(time.time()),
            "errors": {"object": "list", "data": job.errors} if job.errors else None,
            "request_counts": {"total": lines, "completed": completed, "failed": failed},
        }

    def _lines(self, ident: str | None) -> list[str]:
        return [] if ident is None else self.files[ident][1].decode().splitlines()


def _error_line(custom_id: Any, code: str, message: str) -> dict[str, Any]:
    return {"id": None, "custom_id": custom_id, "response": None, "error": {"code": code, "message": message}}


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[bytes, str]]:
    """Field name -> (value, filename) of a multipart/form-data body."""
    found = _BOUNDARY.search(content_type)
    if not found:
        return {}
    fields: dict[str, tuple[bytes, str]] = {}
    for part in body.split(b"--" + found.group(1).encode())[1:]:
        head, sep, value = part.partition(b"\r\n\r\n")
        if not sep:
            continue
        disposition = head.decode("latin-1")
        name = re.search(r'name="([^"]*)"', disposition)
        filename = re.search(r'filename="([^"]*)"', disposition)
        if name:
            fields[name.group(1)] = (value.removesuffix(b"\r\n"), filename.group(1) if filename else "")
    return fields


def _json(status: int, payload: Any) -> Answer:
    return status, json.dumps(payload).encode(), "application/json"


def _error(status: int, message: str) -> Answer:
    return _json(status, {"error": {"message": message, "type": "invalid_request_error", "param": None,
                                    "code": str(status)}})
