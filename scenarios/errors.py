"""Domain errors the scenarios raise; each server maps them to gRPC status codes in one place."""

from __future__ import annotations


class ScenarioError(Exception):
    """A failure the client should see, with a message that says what went wrong."""


class InvalidArgument(ScenarioError):
    """A request field is wrong: says which field and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


class NotFound(ScenarioError):
    """The named resource does not exist."""


class Cancelled(ScenarioError):
    """The caller stopped waiting (its deadline passed, or it cancelled): the work stops here."""


class BackendUnavailable(ScenarioError):
    """A backend is unreachable or failing; `backend` names it ("S3" or "MongoDB")."""

    def __init__(self, backend: str, cause: BaseException) -> None:
        super().__init__(f"{backend} is unavailable: {type(cause).__name__}")
        self.backend = backend
        self.cause = cause
