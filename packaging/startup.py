#!/usr/bin/env python3
"""Time to ready and memory of a tabbard binary, as a service manager sees them.

    packaging/startup.py [--runs N] TABBARD [TABBARCTL]

Each run starts TABBARD --audio null on a private socket and state file with
NOTIFY_SOCKET pointing at a datagram socket of ours, and takes the time from
just before fork/exec to the READY=1 datagram (what systemd's Type=notify waits
for). It then reads VmRSS/VmHWM of the ready, idle daemon from /proc, stops it
with SIGTERM, and prints the median and min of each. With TABBARCTL it also
times `TABBARCTL --socket S ping` (a whole CLI invocation, exec to exit).
"""
import os, socket, statistics, subprocess, sys, tempfile, time

def main():
    args = sys.argv[1:]
    runs = 20
    if args[:1] == ["--runs"]:
        runs = int(args[1]); args = args[2:]
    daemon = args[0]
    ctl = args[1] if len(args) > 1 else None
    ready, rss, hwm, ping = [], [], [], []
    for _ in range(runs):
        d = tempfile.mkdtemp(prefix="tabbard-startup-")
        ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ns.bind(d + "/notify")
        env = {k: v for k, v in os.environ.items() if k not in ("LISTEN_FDS", "LISTEN_PID")}
        env["NOTIFY_SOCKET"] = d + "/notify"
        sock = d + "/socket"
        t0 = time.perf_counter()
        p = subprocess.Popen([daemon, "--audio", "null", "--socket", sock, "--state", d + "/state.json",
                              "--log-level", "error"], env=env, stderr=subprocess.DEVNULL)
        ns.settimeout(30)
        while True:
            msg = ns.recv(4096).decode()
            if "READY=1" in msg.split("\n"):
                break
        ready.append((time.perf_counter() - t0) * 1000)
        status = open(f"/proc/{p.pid}/status").read()
        fields = dict(l.split(":", 1) for l in status.splitlines() if ":" in l)
        rss.append(int(fields["VmRSS"].split()[0]) / 1024)
        hwm.append(int(fields["VmHWM"].split()[0]) / 1024)
        if ctl:
            t1 = time.perf_counter()
            subprocess.run([ctl, "--socket", sock, "ping"], check=True, stdout=subprocess.DEVNULL)
            ping.append((time.perf_counter() - t1) * 1000)
        p.terminate(); p.wait(30)
        ns.close()
        subprocess.run(["rm", "-rf", d])
    def show(name, xs, unit):
        print(f"{name:34s} median {statistics.median(xs):7.2f} {unit}  min {min(xs):7.2f} {unit}  (n={len(xs)})")
    show("exec → READY=1", ready, "ms")
    show("RSS when ready (VmRSS)", rss, "MB")
    show("peak RSS up to ready (VmHWM)", hwm, "MB")
    if ping:
        show("tabbarctl ping (exec → exit)", ping, "ms")

main()
