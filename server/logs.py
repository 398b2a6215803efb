"""The server's log lines: plain text, or JSON lines (``--log-format json``).

A table actor's task names its table (:func:`table_context`, set once when its loop
starts; a task's context is its own), and every line written from that task carries the
table id and the number of its hand (the one in progress, or the last dealt; 0 before the
first), whichever module writes it. A JSON line is one object: ``time`` (UTC, ISO 8601),
``level``, ``logger``, ``message``, then ``table`` and ``hand`` when a table wrote it, and
``exception`` with the traceback when there is one. No line names a request's query string
(:func:`hide_query_strings`): a client that puts its token in a URL does not have it logged.
"""

from __future__ import annotations

import logging
import re
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

import orjson

LogFormat = Literal["text", "json"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: A text line: its time (UTC, ISO 8601), level and logger, then the message.
TEXT_LINE = re.compile(r"(?P<time>\S+Z) (?P<level>[A-Z]+) (?P<logger>\S+): (?P<message>.*)")


def utc_time(created: float) -> str:
    """A record's time as the lines write it: UTC, ISO 8601, to the millisecond.

    >>> utc_time(0.5)
    '1970-01-01T00:00:00.500Z'
    """
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def level_of(line: str) -> str | None:
    """The level of a text log line (None: not the first line of a record).

    >>> level_of("2026-01-02T03:04:05.678Z ERROR server.cardroom.supervisor: a table failed")
    'ERROR'
    """
    found = TEXT_LINE.match(line)
    return found["level"] if found else None


def named(error: BaseException) -> str:
    """An error as a log line names it: its type, and its message when it has one (a
    timeout's is empty).

    >>> named(TimeoutError())
    'TimeoutError'
    >>> named(ConnectionError("refused"))
    'ConnectionError: refused'
    """
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class LoggedTable(Protocol):
    @property
    def table_id(self) -> int: ...

    @property
    def hand_number(self) -> int: ...


_table: ContextVar[LoggedTable | None] = ContextVar("stud_table", default=None)


def table_context(table: LoggedTable) -> None:
    """From here on, the lines the current task writes are the table's (call it first
    thing in the table's own task: the setting stays within that task)."""
    _table.set(table)


class TableFilter(logging.Filter):
    """Adds ``table`` and ``hand`` to a record written by a table's task (a record that
    names its table with ``extra={"table": ...}`` keeps it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        table = _table.get()
        if table is not None and not hasattr(record, "table"):
            record.table = table.table_id
            record.hand = table.hand_number
        return True


class TextFormatter(logging.Formatter):
    """A line a record, after its time in UTC (a log read beside another machine's, or
    after a change of time zone, lines up)."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 - the logging API's name
        return utc_time(record.created)


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        table = getattr(record, "table", None)
        if table is not None:
            line["table"] = table
            hand = getattr(record, "hand", None)
            if hand is not None:
                line["hand"] = hand
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return orjson.dumps(line, default=str).decode()


#: The loggers uvicorn writes a request's path to: its access log, and its error log (the
#: websocket handshakes' lines, and the websockets library's own at debug level).
REQUEST_LOGGERS = ("uvicorn.access", "uvicorn.error")


def path_only(value: object) -> object:
    """A request's path without its query string; any other value as it is.

    >>> path_only("/ws?token=abc"), path_only("127.0.0.1:5000"), path_only(200)
    ('/ws', '127.0.0.1:5000', 200)
    """
    if isinstance(value, str) and value.startswith("/") and "?" in value:
        return value.partition("?")[0]
    return value


class QueryStringFilter(logging.Filter):
    """Cuts the query string off every path among a record's arguments (uvicorn passes the
    path as an argument: ``'%s - "WebSocket %s" [accepted]'``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(path_only(arg) for arg in record.args)
        return True


def hide_query_strings() -> None:
    """From here on, uvicorn's lines name paths without their query strings (once per
    process: the filter is added to each logger only once)."""
    for name in REQUEST_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, QueryStringFilter) for f in logger.filters):
            logger.addFilter(QueryStringFilter())


def handler(log_format: LogFormat) -> logging.Handler:
    """A handler to standard error in that format, with the table's context."""
    out = logging.StreamHandler()
    out.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter(TEXT_FORMAT))
    out.addFilter(TableFilter())
    return out


def configure(level: str, log_format: LogFormat) -> None:
    """The root logger writes every line (uvicorn's too, when it is run without its own
    logging configuration) in the format asked for; like ``logging.basicConfig``, nothing
    changes if the root logger has a handler already."""
    logging.basicConfig(level=level.upper(), handlers=[handler(log_format)])
