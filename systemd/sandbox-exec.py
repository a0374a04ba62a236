#!/usr/bin/python3
"""Run a program under the seccomp part of a systemd service's sandbox, without systemd.

    systemd/sandbox-exec.py SERVICE_FILE -- PROGRAM [ARGS...]
    systemd/sandbox-exec.py SERVICE_FILE --print      # the resolved allow-list, one a line

Reads these [Service] lines of SERVICE_FILE and installs the seccomp filters systemd 252
would install for them, one filter per directive, stacked as systemd stacks them (the
kernel takes the strictest answer), then execs PROGRAM:

  SystemCallFilter=  SystemCallErrorNumber=  SystemCallArchitectures=native
  MemoryDenyWriteExecute=  RestrictAddressFamilies=  RestrictNamespaces=
  LockPersonality=  RestrictRealtime=  RestrictSUIDSGID=

Groups (@system-service, ...) are expanded with `systemd-analyze syscall-filter`, so the
sets are the ones of the systemd on this machine. An allow-list implies @default, as in
systemd. Uses libseccomp (libseccomp2, a dependency of systemd) through ctypes.

What it cannot do is not pretended: users, namespaces, mounts and the device cgroup are
set up by systemd/check-sandbox.sh with unshare, mount and setpriv.
"""
import ctypes
import errno
import os
import subprocess
import sys

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_NE, SCMP_CMP_EQ, SCMP_CMP_MASKED_EQ = 1, 4, 7


def SCMP_ACT_ERRNO(e):
    return 0x00050000 | (e & 0xFFFF)


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                       ctypes.c_uint, ctypes.POINTER(ArgCmp)]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
lib.seccomp_release.argtypes = [ctypes.c_void_p]


def syscall_groups():
    """{"@group": [entries]} from `systemd-analyze syscall-filter`."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True,
                         text=True, check=True, env=dict(os.environ, LC_ALL="C")).stdout
    groups, current = {}, None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            current = line.strip() if line.startswith("@") else None
            if current:
                groups[current] = []
            continue
        entry = line.strip()
        if current and not entry.startswith("#"):
            groups[current].append(entry)
    return groups


def expand(items, groups):
    out = set()
    for item in items:
        out |= expand(groups[item], groups) if item.startswith("@") else {item}
    return out


def service_settings(path):
    """[Service] key → list of values (in order; repeated keys accumulate)."""
    settings, section = {}, None
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]" and "=" in line:
                key, value = line.split("=", 1)
                settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def allowed_syscalls(settings, groups):
    """The allow-list systemd builds from SystemCallFilter= lines (None: no allow-list)."""
    lines = settings.get("SystemCallFilter", [])
    if not lines or lines[0].startswith("~"):
        return None  # deny-list mode is not used by tabbard's units
    allow = expand(["@default"], groups)
    for value in lines:
        deny = value.startswith("~")
        items = value.lstrip("~").split()
        if deny:
            allow -= expand(items, groups)
        else:
            allow |= expand(items, groups)
    return allow


def yes(settings, key):
    return settings.get(key, ["no"])[-1].lower() in ("yes", "true", "1", "on")


class Filter:
    """One seccomp filter program (systemd installs one per directive)."""

    def __init__(self, default_action):
        self.ctx = lib.seccomp_init(default_action)
        if not self.ctx:
            sys.exit("sandbox-exec: seccomp_init failed")

    def rule(self, action, name, *cmps, optional=False):
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        if nr == -1:  # not a syscall on this architecture (e.g. ARM-only names)
            return
        arr = (ArgCmp * max(len(cmps), 1))(*[ArgCmp(*c) for c in cmps])
        r = lib.seccomp_rule_add_array(self.ctx, action, nr, len(cmps), arr)
        if r != 0 and nr >= 0 and not optional:
            sys.exit(f"sandbox-exec: cannot add a rule for {name}: {os.strerror(-r)}")

    def load(self):
        r = lib.seccomp_load(self.ctx)
        if r != 0:
            sys.exit(f"sandbox-exec: seccomp_load failed: {os.strerror(-r)}")
        lib.seccomp_release(self.ctx)


def install(settings, groups):
    eperm = SCMP_ACT_ERRNO(errno.EPERM)
    if yes(settings, "MemoryDenyWriteExecute"):
        PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000
        f = Filter(SCMP_ACT_ALLOW)
        f.rule(eperm, "mmap", (2, SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE | PROT_EXEC))
        for name in ("mprotect", "pkey_mprotect"):
            f.rule(eperm, name, (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
        f.rule(eperm, "shmat", (2, SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC))
        f.load()

    families = settings.get("RestrictAddressFamilies", [])
    if families:
        if families[-1].startswith("~") or families[-1].split() != ["AF_UNIX"]:
            sys.exit("sandbox-exec: only RestrictAddressFamilies=AF_UNIX is emulated")
        f = Filter(SCMP_ACT_ALLOW)
        f.rule(SCMP_ACT_ERRNO(errno.EAFNOSUPPORT), "socket", (0, SCMP_CMP_NE, 1, 0))  # AF_UNIX = 1
        f.load()

    if yes(settings, "RestrictNamespaces"):
        flags = [0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                 0x40000000, 0x80]  # NEWNS CGROUP UTS IPC USER PID NET TIME
        f = Filter(SCMP_ACT_ALLOW)
        for flag in flags:
            for name in ("unshare", "clone"):
                f.rule(eperm, name, (0, SCMP_CMP_MASKED_EQ, flag, flag))
        f.rule(eperm, "setns")
        # clone3 passes its flags in memory, which seccomp cannot see: systemd answers ENOSYS
        # so that glibc falls back to clone().
        f.rule(SCMP_ACT_ERRNO(errno.ENOSYS), "clone3")
        f.load()

    if yes(settings, "LockPersonality"):
        f = Filter(SCMP_ACT_ALLOW)
        f.rule(eperm, "personality", (0, SCMP_CMP_NE, 0, 0))  # PER_LINUX
        f.load()

    if yes(settings, "RestrictRealtime"):
        f = Filter(SCMP_ACT_ALLOW)
        for policy in (1, 2, 6):  # SCHED_FIFO, SCHED_RR, SCHED_DEADLINE (with or without RESET_ON_FORK)
            f.rule(eperm, "sched_setscheduler", (1, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF & ~0x40000000, policy))
        f.load()

    if yes(settings, "RestrictSUIDSGID"):
        f = Filter(SCMP_ACT_ALLOW)
        for bit in (0o4000, 0o2000):  # S_ISUID, S_ISGID
            f.rule(eperm, "chmod", (1, SCMP_CMP_MASKED_EQ, bit, bit))
            f.rule(eperm, "fchmod", (1, SCMP_CMP_MASKED_EQ, bit, bit))
            f.rule(eperm, "fchmodat", (2, SCMP_CMP_MASKED_EQ, bit, bit))
            f.rule(eperm, "creat", (1, SCMP_CMP_MASKED_EQ, bit, bit))
            f.rule(eperm, "open", (1, SCMP_CMP_MASKED_EQ, 0o100, 0o100), (2, SCMP_CMP_MASKED_EQ, bit, bit))
            f.rule(eperm, "openat", (2, SCMP_CMP_MASKED_EQ, 0o100, 0o100), (3, SCMP_CMP_MASKED_EQ, bit, bit))
        f.load()

    # The system call allow-list last: seccomp() itself is not on it.
    allow = allowed_syscalls(settings, groups)
    if allow is not None:
        number = settings.get("SystemCallErrorNumber", [None])[-1]
        default = SCMP_ACT_ERRNO(getattr(errno, number)) if number else SCMP_ACT_KILL_PROCESS
        f = Filter(default)  # libseccomp filters only the native architecture: =native
        for name in sorted(allow):
            f.rule(SCMP_ACT_ALLOW, name)
        f.load()


def main(argv):
    if len(argv) >= 3 and argv[2] == "--print":
        allow = allowed_syscalls(service_settings(argv[1]), syscall_groups())
        print("\n".join(sorted(allow or [])))
        return 0
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    settings = service_settings(argv[1])
    groups = syscall_groups()  # before the filters: systemd-analyze would not run under them
    if yes(settings, "NoNewPrivileges"):
        ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    install(settings, groups)
    os.execv(argv[3], argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
