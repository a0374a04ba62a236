"""Exceptions: one class per `data.kind` of the protocol, each carrying the daemon's message."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type


class Error(Exception):
    """An error reply from tabbard, or a problem on this side (`kind` "disconnected", "timeout",
    "connect", "protocol"). `code` is the JSON-RPC code (None on this side), `kind` the
    daemon's stable `data.kind`, `message` its sentence, `data` the whole `data` object."""

    kind_name = "error"

    def __init__(self, message: str, code: Optional[int] = None, kind: Optional[str] = None,
                 data: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.kind = kind if kind is not None else self.kind_name
        self.data: Dict[str, Any] = dict(data or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, kind={self.kind!r}, message={self.message!r})"


class ParseError(Error):
    kind_name = "parse_error"


class InvalidRequest(Error):
    kind_name = "invalid_request"


class LineTooLong(InvalidRequest):
    kind_name = "line_too_long"


class BatchUnsupported(InvalidRequest):
    kind_name = "batch_unsupported"


class MethodNotFound(Error):
    kind_name = "method_not_found"


class InvalidParams(Error):
    """`data["field"]` names the parameter (e.g. `items[2].kind`)."""
    kind_name = "invalid_params"

    @property
    def field(self) -> Optional[str]:
        f = self.data.get("field")
        return f if isinstance(f, str) else None


class InternalError(Error):
    kind_name = "internal_error"


class UnknownTab(Error):
    kind_name = "unknown_tab"


class NotSelectable(Error):
    kind_name = "not_selectable"


class Conflict(Error):
    """`if_seq` did not match; `data["seq"]` is the current one."""
    kind_name = "conflict"


class UnknownSound(Error):
    kind_name = "unknown_sound"


class AudioUnavailable(Error):
    kind_name = "audio_unavailable"


class LimitExceeded(Error):
    kind_name = "limit_exceeded"


class PermissionDenied(Error):
    kind_name = "permission_denied"


class StorageFailed(Error):
    kind_name = "storage_failed"


class ClockNotManual(Error):
    kind_name = "clock_not_manual"


class CaptureFailed(Error):
    kind_name = "capture_failed"


class UnknownKind(Error):
    """An error kind this client does not know (the protocol may add some)."""
    kind_name = "unknown"


# This side's errors.
class ConnectError(Error):
    """The socket could not be reached (no daemon, wrong path, an untrusted directory)."""
    kind_name = "connect"


class Disconnected(Error):
    """The connection closed before the reply (the daemon stopped or restarted)."""
    kind_name = "disconnected"


class Timeout(Error):
    """No reply within the client's timeout."""
    kind_name = "timeout"


class ProtocolViolation(Error):
    """The daemon sent something this client cannot read."""
    kind_name = "protocol"


_BY_KIND: Dict[str, Type[Error]] = {c.kind_name: c for c in (
    ParseError, InvalidRequest, LineTooLong, BatchUnsupported, MethodNotFound, InvalidParams, InternalError,
    UnknownTab, NotSelectable, Conflict, UnknownSound, AudioUnavailable, LimitExceeded, PermissionDenied,
    StorageFailed, ClockNotManual, CaptureFailed)}


def error_from_reply(error: Any) -> Error:
    """The exception for a reply's `error` member."""
    if not isinstance(error, dict):
        return ProtocolViolation(f"an error member that is not an object: {error!r}")
    raw = error.get("data")
    data: Dict[str, Any] = raw if isinstance(raw, dict) else {}
    kind = data.get("kind") if isinstance(data.get("kind"), str) else None
    code = error.get("code") if isinstance(error.get("code"), int) else None
    message = str(error.get("message", "tabbard returned an error"))
    cls = _BY_KIND.get(kind or "", UnknownKind)
    return cls(message, code=code, kind=kind or "unknown", data=data)
