#!/usr/bin/env python3
"""The audio thread's realtime scheduling through RTKit, as a desktop user gets it.

A user's tabbard has no CAP_SYS_NICE and, on Debian, RLIMIT_RTPRIO 0: `sched_setscheduler` is refused
and the audio thread asks RTKit (org.freedesktop.RealtimeKit1 on the system bus, which asks polkit).
Each case starts its own system bus (a dbus-daemon of type system on a private socket, with the
machine's /usr/share/dbus-1/system.d policies), polkitd, and Debian's rtkit-daemon on it, then runs
tabbard as `nobody` with RLIMIT_RTPRIO 0 and DBUS_SYSTEM_BUS_ADDRESS pointing at that bus, and reads
what the kernel says the audio thread runs at (/proc/PID/task/TID/stat) beside what the log says.

polkit's default for RTKit's actions is allowed only for a user in a (logind) session; there is none
here, so the granting cases give polkitd a rule that allows them, the way an administrator would —
in a private mount namespace (the rules directory bind-mounted over /etc/polkit-1/rules.d for that
polkitd only), so the machine's polkit configuration is neither read nor changed.

Needs root (it starts polkitd and rtkit-daemon, and drops tabbard to nobody) and mount namespaces;
without them it says SKIP and why, and exits 0 — unless RTKIT_REQUIRED=1 (like the sandbox check's
SANDBOX_REQUIRED). CI runs as root, so there it always runs.
usage: tests/rtkit/test_rtkit.py --daemon PATH/TO/tabbard [--rig rig/rig.sh] [CASE ...]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rig"))  # pwrig
from pwrig import Rig, run_tests, sched, terminate, wait_for  # noqa: E402  (the helpers both real-system suites share)

DAEMON = None
RIG = None
NOBODY = 65534
RULE = """polkit.addRule(function(action, subject) {
    if (action.id.indexOf("org.freedesktop.RealtimeKit1.") == 0) return polkit.Result.YES;
});
"""


class Proc:
    """A child whose output is collected by a thread (a pipe: rtkit-daemon limits its own file size
    to 0, so writing its log to a file would kill it with SIGXFSZ)."""

    def __init__(self, argv, env=None):
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def text(self):
        with self.lock:
            return "\n".join(self.lines)

    def stop(self):
        rc = terminate(self.proc)
        self.reader.join(timeout=5)
        return rc


class SystemBus:
    """A private system bus with polkitd and rtkit-daemon on it."""

    def __init__(self, rule, rtkit_args):
        self.dir = tempfile.mkdtemp(prefix="tabbard-rtkit-")
        os.chmod(self.dir, 0o755)
        self.procs = []
        sock = os.path.join(self.dir, "system_bus_socket")
        conf = os.path.join(self.dir, "system.conf")
        with open(conf, "w") as f:
            f.write("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <includedir>/usr/share/dbus-1/system.d</includedir>
</busconfig>
""" % sock)
        self.address = "unix:path=" + sock
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        self.bus = self._start(["dbus-daemon", "--config-file=" + conf, "--nofork", "--nopidfile"])
        wait_for(lambda: os.path.exists(sock) or self.bus.proc.poll() is not None, 30, "the system bus socket")
        rules = os.path.join(self.dir, "rules.d")
        os.mkdir(rules, 0o755)
        if rule:
            with open(os.path.join(rules, "50-tabbard-test-rtkit.rules"), "w") as f:
                f.write(RULE)
        # exec: the PID is polkitd's; the bind mount lives and dies with its namespace.
        self.polkit = self._start(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                   'mount --bind "$0" /etc/polkit-1/rules.d && exec /usr/lib/polkit-1/polkitd --no-debug',
                                   rules])
        self.wait_name("org.freedesktop.PolicyKit1", self.polkit)
        self.rtkit = self._start(["/usr/libexec/rtkit-daemon", "--stderr", "--no-canary"] + list(rtkit_args))
        self.wait_name("org.freedesktop.RealtimeKit1", self.rtkit)

    def _start(self, argv):
        p = Proc(argv, self.env)
        self.procs.append(p)
        return p

    def names(self):
        r = subprocess.run(["dbus-send", "--bus=" + self.address, "--print-reply", "--dest=org.freedesktop.DBus",
                            "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=10)
        return r.stdout

    def wait_name(self, name, proc):
        def up():
            if proc.proc.poll() is not None:
                raise RuntimeError("%s exited %s: %s" % (name, proc.proc.returncode, proc.text()))
            return '"%s"' % name in self.names()
        wait_for(up, 30, name + " on the private system bus")

    def stop(self):
        for p in reversed(self.procs):
            p.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class UserDaemon:
    """tabbard as `nobody`, RLIMIT_RTPRIO 0, with the private system bus: on the null sink, or on `audio`
    (tabbard's arguments) with `env` added (a rig's)."""

    def __init__(self, bus, audio=("--audio", "null"), env=None):
        self.dir = tempfile.mkdtemp(prefix="tabbard-rtkit-user-")
        os.chown(self.dir, NOBODY, NOBODY)
        os.chmod(self.dir, 0o700)
        binary = os.path.join(self.dir, "tabbard")
        shutil.copy(DAEMON, binary)
        os.chmod(binary, 0o755)
        self.proc = Proc(["prlimit", "--rtprio=0", "setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                          "--clear-groups", binary, "--no-config", "--socket", os.path.join(self.dir, "sock"),
                          "--state", os.path.join(self.dir, "state.json")] + list(audio), dict(bus.env, **(env or {})))
        # prlimit and setpriv exec: the PID is tabbard's.
        self.line = wait_for(lambda: self._realtime_line(), 30, "tabbard's realtime log line")

    def _realtime_line(self):
        if self.proc.proc.poll() is not None:
            raise RuntimeError("tabbard exited %s: %s" % (self.proc.proc.returncode, self.proc.text()))
        for line in self.proc.text().splitlines():
            if "audio thread runs" in line or "audio thread stays" in line:
                return line
        return None

    def audio_thread(self):
        """(policy, rt_priority) of the tabbard-audio thread as the kernel has them."""
        threads = sched(self.proc.proc.pid, "tabbard-audio")
        if len(threads) != 1:
            raise AssertionError("not one tabbard-audio thread in /proc/%d/task: %s" % (self.proc.proc.pid, threads))
        return threads[0]

    def stop(self):
        rc = self.proc.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc


SCHED_OTHER, SCHED_FIFO, SCHED_RR = 0, 1, 2


class RTKitCase(unittest.TestCase):
    RULE = True
    RTKIT_ARGS = ()

    def setUp(self):
        self.bus = SystemBus(self.RULE, self.RTKIT_ARGS)
        self.daemon = None

    def tearDown(self):
        if self.daemon is not None:
            rc = self.daemon.stop()
            self.assertEqual(rc, 0, "tabbard did not exit 0 on SIGTERM:\n" + self.daemon.proc.text()[-2000:])
        self.bus.stop()

    def run_daemon(self):
        self.daemon = UserDaemon(self.bus)
        return self.daemon.line, self.daemon.audio_thread()

    def context(self):
        return "\ntabbard:\n%s\nrtkit-daemon:\n%s" % (self.daemon.proc.text()[-1500:], self.bus.rtkit.text()[-1500:])


class DebianDefaults(RTKitCase):
    """rtkit-daemon as Debian starts it: SCHED_RR, at most priority 20."""

    def test_granted_and_said_as_the_kernel_has_it(self):
        line, (policy, prio) = self.run_daemon()
        self.assertEqual((policy, prio), (SCHED_RR, 20), "the audio thread's policy and priority" + self.context())
        self.assertIn("audio thread runs SCHED_RR priority=20 (granted by RTKit; realtime_priority 83 is above "
                      "RTKit's maximum)", line, "the log says what the thread got" + self.context())


class FifoUpTo90(RTKitCase):
    """An rtkit-daemon set to hand out SCHED_FIFO up to 90: tabbard gets the 83 it asks for."""
    RTKIT_ARGS = ("--scheduling-policy=FIFO", "--our-realtime-priority=91", "--max-realtime-priority=90")

    def test_granted_at_the_asked_priority(self):
        line, (policy, prio) = self.run_daemon()
        self.assertEqual((policy, prio), (SCHED_FIFO, 83), "the audio thread's policy and priority" + self.context())
        self.assertIn("audio thread runs SCHED_FIFO priority=83 (granted by RTKit)", line, self.context())


class NotAuthorized(RTKitCase):
    """No session and no rule: polkit says no, and tabbard says so and keeps playing at normal priority."""
    RULE = False

    def test_refused_with_the_reason(self):
        line, (policy, prio) = self.run_daemon()
        self.assertEqual(policy, SCHED_OTHER, "the audio thread stayed at normal priority" + self.context())
        self.assertIn("audio thread stays at normal priority (realtime_priority 83 refused: sched_setscheduler "
                      "EPERM; RTKit refused (", line, self.context())


class PluginThread(RTKitCase):
    """PipeWire's ALSA plugin runs a main-loop thread (alsa-pipewire) in tabbard's process that must run
    like the audio thread, or a click after idle waits a cycle more (docs/AUDIO.md, "The first cycle after
    idle"). As a desktop user, that too goes through RTKit: the user's own PipeWire (a private rig run as
    nobody as well), tabbard on it through PipeWire's ALSA plugin."""

    def setUp(self):
        super().setUp()
        self.rig = Rig(RIG, user=NOBODY)
        try:
            self.rig.start()
        except Exception:
            self.rig.stop()
            shutil.rmtree(self.rig.dir, ignore_errors=True)
            raise

    def tearDown(self):
        try:
            super().tearDown()
        finally:
            self.rig.stop()
            shutil.rmtree(self.rig.dir, ignore_errors=True)

    def test_granted_like_the_audio_thread(self):
        self.daemon = UserDaemon(self.bus, ("--audio", "alsa", "--alsa-device", "rig"), self.rig.env)
        pid = self.daemon.proc.proc.pid
        audio = self.daemon.audio_thread()
        self.assertEqual(audio, (SCHED_RR, 20), "the audio thread's policy and priority" + self.context())
        try:
            wait_for(lambda: sched(pid, "alsa-pipewire") == [audio], 20, "the plugin's thread raised")
        except TimeoutError:
            pass          # said by the assertion
        self.assertEqual(sched(pid, "alsa-pipewire"), [audio], "the plugin's thread(s) (policy, priority), the "
                         "audio thread's %s%s\npipewire:\n%s" % (audio, self.context(), self.rig.log("pipewire")[-800:]))


def main():
    global DAEMON, RIG
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--rig", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rig", "rig.sh"))
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    DAEMON = os.path.abspath(a.daemon)
    RIG = os.path.abspath(a.rig)
    why = None
    if os.getuid() != 0:
        why = "not root"
    elif subprocess.run(["unshare", "--mount", "true"], stderr=subprocess.DEVNULL).returncode != 0:
        why = "cannot create a mount namespace here"
    if why:
        print("SKIP: %s (tests/rtkit needs root and mount namespaces: it starts polkitd and rtkit-daemon and "
              "runs tabbard as nobody)" % why)
        sys.exit(1 if os.environ.get("RTKIT_REQUIRED") == "1" else 0)
    run_tests(sys.modules[__name__], a.names)


if __name__ == "__main__":
    main()
