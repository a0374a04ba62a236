#!/usr/bin/env python3
"""Every Swift example of docs/CLIENT.md and docs/HARNESS.md, as written, in a new package.

The package depends on tabbard by path and names only the TabBarClient / TabBarTesting
products (swift-tools-version 6.0: Swift 6 language mode). A configuration of the user's
(~/.config/tabbard/config.json, HOME pointed at a temporary one) and, when run as root and
none is there, of the system's (/etc/tabbard/config.json, removed after) are present and
would change the bar if read (/etc's only inside a mount namespace of the run's own). CLIENT.md's blocks are executables run in order against one
daemon ($TABBARD_SOCKET); HARNESS.md's are the test target's files, run by `swift test`
with neither TABBARD_BIN_DIR nor TABBARD_SOUNDS set (the harness finds both itself), then
with a TABBARD_BIN_DIR that holds no tabbard (it must fail saying so, in one line).
A block whose first line is `// Package.swift…` shows the manifest and is not compiled.

Usage: run.py REPO TABBARD_BIN_DIR   (the package and its build cache: REPO/.build/examples)
"""
import os, re, shutil, subprocess, sys, tempfile, time

if os.geteuid() == 0 and "TABBARD_EXAMPLES_NS" not in os.environ and shutil.which("unshare"):
    os.environ["TABBARD_EXAMPLES_NS"] = "1"
    os.execvp("unshare", ["unshare", "--mount", "--propagation", "private", sys.executable] + sys.argv)
repo, bindir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
swift = os.environ.get("SWIFT", "swift")


def blocks(doc):
    text = open(os.path.join(repo, "docs", doc)).read()
    found = re.findall(r"```swift\n(.*?)```", text, re.S)
    return [b for b in found if not b.startswith("// Package.swift")]


client, harness = blocks("CLIENT.md"), blocks("HARNESS.md")
assert client and harness, "no Swift examples found"

work = os.path.join(repo, ".build", "examples")
os.makedirs(work, exist_ok=True)
for d in ("Sources", "Tests", "tabbard"):  # fresh sources each run; the build cache stays
    p = os.path.join(work, d)
    if os.path.islink(p):
        os.unlink(p)
    elif os.path.exists(p):
        shutil.rmtree(p)
os.symlink(repo, os.path.join(work, "tabbard"))  # the dependency's identity is "tabbard", as in the docs

targets = []
for i, body in enumerate(client, 1):
    name = f"ClientExample{i}"
    os.makedirs(os.path.join(work, "Sources", name))
    open(os.path.join(work, "Sources", name, "main.swift"), "w").write(body)
    targets.append(f'.executableTarget(name: "{name}", dependencies: [.product(name: "TabBarClient", package: "tabbard")])')
os.makedirs(os.path.join(work, "Tests", "HarnessExamples"))
for i, body in enumerate(harness, 1):
    open(os.path.join(work, "Tests", "HarnessExamples", f"Example{i}.swift"), "w").write(body)
targets.append('.testTarget(name: "HarnessExamples", dependencies: [.product(name: "TabBarTesting", package: "tabbard")])')
open(os.path.join(work, "Package.swift"), "w").write(
    "// swift-tools-version:6.0\nimport PackageDescription\n\n"
    'let package = Package(\n    name: "Examples",\n    dependencies: [.package(path: "tabbard")],\n'
    "    targets: [\n        " + ",\n        ".join(targets) + ",\n    ]\n)\n")

tmp = tempfile.mkdtemp(prefix="tabbard-examples-")
trap = '{"clock": "real", "audio": "alsa", "sounds": ["/nonexistent/tabbard-sounds"], "log_level": "debug"}\n'
os.makedirs(os.path.join(tmp, "home", ".config", "tabbard"))
open(os.path.join(tmp, "home", ".config", "tabbard", "config.json"), "w").write(trap)
# The system's config: in a mount namespace of this run's own (as root), a directory holding
# the trap is bound over /etc/tabbard, so no other process on the machine sees it.
etc_mounted, etc_created = False, False
if os.environ.get("TABBARD_EXAMPLES_NS") == "1":
    os.makedirs(os.path.join(tmp, "etc"))
    open(os.path.join(tmp, "etc", "config.json"), "w").write(trap)
    etc_created = not os.path.exists("/etc/tabbard")
    os.makedirs("/etc/tabbard", exist_ok=True)
    subprocess.run(["mount", "--bind", os.path.join(tmp, "etc"), "/etc/tabbard"], check=True)
    etc_mounted = True
    print("examples: /etc/tabbard/config.json present (in this run's mount namespace)")
else:
    print("examples: not root (or no unshare): only the user's config is present, not /etc/tabbard's")

env = {k: v for k, v in os.environ.items()
       if k not in ("TABBARD_BIN_DIR", "TABBARD_SOUNDS", "TABBARD_SOUNDS_DIR", "TABBARD_SOCKET",
                    "TABBARD_INSTANCE", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS")}
env["HOME"] = os.path.join(tmp, "home")
failures = []
daemon = None
try:
    def run(args, **kw):
        print("+", " ".join(args), flush=True)
        return subprocess.run(args, cwd=work, env=kw.pop("env", env), timeout=kw.pop("timeout", 1800), **kw)

    if run([swift, "build", "--build-tests"]).returncode != 0:
        sys.exit("examples: the package does not build (see above)")
    bin_path = subprocess.run([swift, "build", "--show-bin-path"], cwd=work, env=env,
                              capture_output=True, text=True, check=True).stdout.strip()
    stale = os.path.join(bin_path, "tabbard")  # (one a person built here by hand: the harness would take it first)
    if os.path.exists(stale):
        os.unlink(stale)

    # CLIENT.md: one daemon, each example in order.
    sock = os.path.join(tmp, "socket")
    log = open(os.path.join(tmp, "tabbard.log"), "w")
    daemon = subprocess.Popen([os.path.join(bindir, "tabbard"), "--socket", sock, "--state", os.path.join(tmp, "state.json"),
                               "--audio", "null", "--no-config", "--sounds", os.path.join(repo, "Sounds")],
                              env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    deadline = time.monotonic() + 10
    while not os.path.exists(sock):  # waiting for the daemon to listen, not for time to pass
        if daemon.poll() is not None or time.monotonic() > deadline:
            sys.exit("examples: tabbard did not start: " + open(log.name).read())
        time.sleep(0.02)
    cenv = dict(env, TABBARD_SOCKET=sock)
    for i in range(1, len(client) + 1):
        r = run([os.path.join(bin_path, f"ClientExample{i}")], env=cenv, timeout=60)
        if r.returncode != 0:
            failures.append(f"docs/CLIENT.md example {i} exited {r.returncode}")

    # HARNESS.md: the test target, the harness finding tabbard and its sounds by itself.
    if run([swift, "test", "--skip-build"], timeout=600).returncode != 0:
        failures.append("docs/HARNESS.md's examples: swift test failed")
    # A wrong TABBARD_BIN_DIR: the test fails at once, with one line saying what to do.
    wrong = os.path.join(tmp, "no-tabbard-here")
    r = run([swift, "test", "--skip-build"], env=dict(env, TABBARD_BIN_DIR=wrong), timeout=120,
            capture_output=True, text=True)
    said = f"TABBARD_BIN_DIR is {wrong} but there is no executable {wrong}/tabbard: build it (swift build --product tabbard) or unset TABBARD_BIN_DIR"
    if r.returncode == 0 or said not in r.stdout + r.stderr:
        failures.append("with a wrong TABBARD_BIN_DIR the harness did not say so: " + (r.stdout + r.stderr)[-2000:])
    else:
        print("examples: a wrong TABBARD_BIN_DIR fails with: " + said)
finally:
    if daemon is not None:
        daemon.terminate()
        daemon.wait(timeout=10)
    if etc_mounted:
        subprocess.run(["umount", "/etc/tabbard"])
        if etc_created:
            os.rmdir("/etc/tabbard")
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    sys.exit("examples: " + "; ".join(failures))
print(f"examples: {len(client)} of docs/CLIENT.md and {len(harness)} of docs/HARNESS.md built and ran in a new package")
