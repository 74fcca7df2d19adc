"""Info: the latest info per name, kept in the server process's memory. No I/O: what a request/response
flow costs the stack itself, whether it comes as unary calls, as stream messages or as REST."""

from __future__ import annotations

from dataclasses import dataclass

from scenarios.errors import InvalidArgument


@dataclass(frozen=True)
class Info:
    age: int
    height: int


def validate_info(name: str, age: int, height: int) -> None:
    """Raise InvalidArgument naming the first field that is wrong."""
    if not name:
        raise InvalidArgument("name", "must not be empty")
    if age < 0:
        raise InvalidArgument("age", f"must be 0 or more, got {age}")
    if height < 0:
        raise InvalidArgument("height", f"must be 0 or more, got {height}")


class InfoStore:
    """The latest info per name. Threads may share one: a dict's item assignment is atomic in CPython."""

    def __init__(self) -> None:
        self._latest: dict[str, Info] = {}

    def set(self, name: str, age: int, height: int) -> None:
        """Keep this info as name's latest; InvalidArgument for bad input, which changes nothing."""
        validate_info(name, age, height)
        self._latest[name] = Info(age, height)

    def get(self, name: str) -> Info | None:
        return self._latest.get(name)

    def refusal(self, name: str, age: int, height: int) -> str:
        """Set, for a stream that goes on after bad input: "" when kept, else why it was refused."""
        try:
            self.set(name, age, height)
        except InvalidArgument as error:
            return str(error)
        return ""
