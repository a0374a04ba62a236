"""Where the daemon's socket is: the rules of `tabbarctl` (SocketPath.swift, InstancePath.swift)."""
from __future__ import annotations

import os
import stat
from typing import Mapping, Optional

SYSTEM_SOCKET = "/run/tabbard/socket"


def _non_empty(value: Optional[str]) -> Optional[str]:
    return value if value else None


def _default(env: Mapping[str, str], uid: int) -> str:
    runtime = _non_empty(env.get("XDG_RUNTIME_DIR"))
    if runtime is not None and runtime.startswith("/"):
        return (runtime[:-1] if runtime.endswith("/") else runtime) + "/tabbard/socket"
    return SYSTEM_SOCKET if uid == 0 else f"/tmp/tabbard-{uid}/socket"


def is_valid_instance(name: str) -> bool:
    """Whether `name` can name an instance: not empty, no `/`, not `.` or `..`, at most 100 bytes."""
    return bool(name) and "/" not in name and name not in (".", "..") and len(name.encode()) <= 100


def instance_socket_path(name: str, environ: Optional[Mapping[str, str]] = None, uid: Optional[int] = None) -> str:
    """The socket of instance `name` (`tabbard@NAME.socket`): `$XDG_RUNTIME_DIR/tabbard/NAME.socket`,
    else next to the default socket (`/run/tabbard/NAME.socket` for root, `/tmp/tabbard-UID/NAME.socket`)."""
    if not is_valid_instance(name):
        raise ValueError(f"{name!r} cannot name an instance: give a name without '/', not '.' or '..', of 1 to 100 bytes")
    env = dict(os.environ if environ is None else environ)
    env.pop("TABBARD_SOCKET", None)
    plain = _default(env, os.getuid() if uid is None else uid)
    directory = plain[: -len("/socket")] if plain.endswith("/socket") else plain
    return f"{directory}/{name}.socket"


def socket_path(explicit: Optional[str] = None, instance: Optional[str] = None,
                environ: Optional[Mapping[str, str]] = None, uid: Optional[int] = None) -> str:
    """The socket a client uses, as `tabbarctl` picks it: `explicit` (`--socket`), `instance`
    (`--instance`), `$TABBARD_SOCKET`, `$TABBARD_INSTANCE`, `$XDG_RUNTIME_DIR/tabbard/socket`, then
    `/run/tabbard/socket` for root or `/tmp/tabbard-UID/socket`. Empty values count as unset."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    user = os.getuid() if uid is None else uid
    if _non_empty(explicit):
        return str(explicit)
    if _non_empty(instance):
        return instance_socket_path(str(instance), env, user)
    from_env = _non_empty(env.get("TABBARD_SOCKET"))
    if from_env is not None:
        return from_env
    name = _non_empty(env.get("TABBARD_INSTANCE"))
    if name is not None:
        return instance_socket_path(name, env, user)
    return _default(env, user)


def untrusted_directory(path: str) -> Optional[str]:
    """Why a socket in the fallback directory `/tmp/tabbard-UID` must not be trusted (None: it may be,
    or `path` is elsewhere): that directory must be ours, mode 0700, as the daemon makes it."""
    uid = os.getuid()
    directory = f"/tmp/tabbard-{uid}"
    if not path.startswith(directory + "/"):
        return None
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot check the socket directory {directory}: {e.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return (f"the socket directory {directory} is not a directory; another user may have made it to take "
                "over the socket: remove it, or set XDG_RUNTIME_DIR")
    if st.st_uid != uid or st.st_mode & 0o777 != 0o700:
        return (f"the socket directory {directory} belongs to uid {st.st_uid} with mode {st.st_mode & 0o777:o}, "
                f"not to uid {uid} with mode 700; another user could replace the socket in it: remove it, "
                "or set XDG_RUNTIME_DIR")
    return None
