#!/usr/bin/env python3
"""Starts a tabbard, asks it `rpc.discover`, and prints the document as docs/openrpc.json holds it
(`json.dumps(doc, indent=2)` and a newline), or with --write FILE writes it there. Standard library only.

    python3 tests/openrpc/discover.py --daemon .build/debug/tabbard --sounds Sounds --write docs/openrpc.json
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rig"))
from tabbardclient import Client  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Daemon  # noqa: E402


def text(doc):
    """The document as the file holds it."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def discover(daemon, sounds):
    with tempfile.TemporaryDirectory(prefix="tabbard-discover-") as tmp:
        d = Daemon(daemon, sounds, tmp)
        try:
            c = Client(d.socket, 10.0)
            doc = c.call("rpc.discover")
            c.close()
        finally:
            d.stop()
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--write", help="the file to write (default: stdout)")
    a = ap.parse_args()
    out = text(discover(a.daemon, a.sounds))
    if a.write:
        with open(a.write, "w", encoding="utf-8") as f:
            f.write(out)
    else:
        sys.stdout.write(out)


if __name__ == "__main__":
    main()
