"""tabbard: a client for the tab bar daemon (docs/PYTHON.md).

    import tabbard
    with tabbard.Client() as bar:          # the socket tabbarctl would use
        bar.select("chat")                 # → {"seq", "selected", "previous", "reselected"}
        for method, params in bar.events(["tab"]):
            print(method, params)
"""
from ._errors import (AudioUnavailable, BatchUnsupported, CaptureFailed, ClockNotManual, Conflict, ConnectError,
                      Disconnected, Error, InternalError, InvalidParams, InvalidRequest, LimitExceeded, LineTooLong,
                      MethodNotFound, NotSelectable, ParseError, PermissionDenied, ProtocolViolation, StorageFailed,
                      Timeout, UnknownKind, UnknownSound, UnknownTab, error_from_reply)
from ._path import instance_socket_path, is_valid_instance, socket_path, untrusted_directory
from .aio import AsyncClient, EventStream
from .client import Client
from .events import Event, Mirror, present_all

__version__ = "0.1.0"

__all__ = [
    "Client", "AsyncClient", "EventStream", "Event", "Mirror", "present_all",
    "socket_path", "instance_socket_path", "is_valid_instance", "untrusted_directory",
    "Error", "ParseError", "InvalidRequest", "LineTooLong", "BatchUnsupported", "MethodNotFound", "InvalidParams",
    "InternalError", "UnknownTab", "NotSelectable", "Conflict", "UnknownSound", "AudioUnavailable",
    "LimitExceeded", "PermissionDenied", "StorageFailed", "ClockNotManual", "CaptureFailed", "UnknownKind",
    "ConnectError", "Disconnected", "Timeout", "ProtocolViolation", "error_from_reply",
]
