#!/usr/bin/env python3
"""Writes the seed corpus of the protocol fuzzer (Fuzz/corpus/seed-*).

Each file is a byte stream as a client would send it: sessions that reach every
method and most error paths, and the hostile inputs of docs/ROBUSTNESS.md.
libFuzzer adds what it finds to the same directory when `make fuzz` runs
(minimised with `make fuzz-merge`)."""
import json, os, sys

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(out, exist_ok=True)

def req(i, method, params=None, **extra):
    d = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        d["params"] = params
    d.update(extra)
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))

def note(method, params=None):
    d = {"method": method}
    if params is not None:
        d["params"] = params
    return json.dumps(d, separators=(",", ":"))

seeds = {}
seeds["methods"] = [
    req(1, "ping"), req(2, "state.get"), req(3, "tab.select", {"tab": "chat"}),
    req(4, "tab.select", {"index": 4, "source": "program"}), req(5, "tab.select", {"tab": "me"}),
    req(6, "action.trigger", {"tab": "post"}), req(7, "action.finish", {"tab": "post"}),
    req(8, "badge.set", {"tab": "chat", "count": 5}), req(9, "badge.set", {"tab": "me", "text": "new"}),
    req(10, "badge.set", {"tab": "nearby", "dot": True}), req(11, "badge.clear", {"tab": "chat"}),
    req(12, "feedback.set", {"profile": "quiet", "volume": 0.5}), req(13, "subscribe", {"topics": ["tab", "badge.changed"]}),
    req(14, "unsubscribe"), req(15, "sound.list"), req(16, "sound.play", {"name": "click"}), req(17, "stats.get"),
]
seeds["configure"] = [
    req(1, "bar.configure", {"items": [{"id": "a", "title": "A", "icon": "house", "selected_icon": "house.fill",
                                        "morph": {"title": "Top", "icon": "arrow.up"}},
                                       {"id": "b", "enabled": False},
                                       {"id": "c", "kind": "center", "action": "compose", "sound": "center"},
                                       {"id": "d", "badge": {"count": 120}},
                                       {"id": "e", "kind": "action", "action": "record"}],
                             "selected": "a", "layout": {"width": 390, "height": 83, "safe_bottom": 34,
                                                         "center": {"width": 64, "height": 64, "raise": 20, "shape": "rect"}}}),
    req(2, "tab.select", {"tab": "b"}), req(3, "tab.select", {"tab": "a"}), req(4, "tab.select", {"tab": "d"}),
    req(5, "bar.configure", {"items": [{"id": "d"}, {"id": "a"}]}),
    req(6, "bar.configure", {"layout": {"rtl": True, "width": 320}}),
    req(7, "bar.configure", {"items": [{"id": "x", "enabled": False}, {"id": "y"}, {"id": "z", "badge": {"text": "€ünïcødé text that is long"}}]}),
    req(8, "state.get"),
]
seeds["badges"] = [
    req(1, "badge.set", {"tab": "chat", "count": 99}), req(2, "badge.set", {"tab": "chat", "count": 100}),
    req(3, "badge.set", {"tab": "chat", "count": 0}), req(4, "badge.set", {"tab": "chat", "count": -3}),
    req(5, "badge.set", {"tab": "me", "text": "🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉"}),
    req(6, "badge.set", {"tab": "me", "text": "e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301"}),
    req(7, "badge.set", {"tab": "me", "text": "x" * 256}), req(8, "badge.set", {"tab": "me", "text": "x" * 257}),
    req(9, "badge.set", {"tab": "me", "text": ""}), req(10, "badge.set", {"tab": "me", "dot": False}),
    req(11, "badge.set", {"tab": "me", "count": 9007199254740993}), req(12, "badge.set", {"tab": "me", "count": 1.5}),
    req(13, "badge.set", {"tab": "me", "count": 3, "dot": True}), req(14, "badge.set", {"tab": "post", "count": 2}),
    req(15, "badge.clear", {"tab": "me"}), req(16, "badge.clear", {"tab": "me"}),
]
seeds["select-errors"] = [
    req(1, "tab.select", {"index": -1}), req(2, "tab.select", {"index": 9007199254740992}),
    req(3, "tab.select", {"tab": "post"}), req(4, "tab.select", {"tab": "chat", "if_seq": 0}),
    req(5, "tab.select", {"tab": "me", "if_seq": 0}), req(6, "tab.select", {"tab": "me", "if_seq": -1}),
    req(7, "tab.select", {"tab": "x" * 65}), req(8, "tab.select", {"tab": "a\u0000b"}),
    req(9, "tab.select", {"tab": "chat", "index": 1}), req(10, "tab.select"), req(11, "tab.select", {"tab": "chat", "source": "robot"}),
    req(12, "tab.select", {"tab": "chat", "tabb": 1}), req(13, "tab.select", {"tab": ""}),
]
seeds["envelope"] = [
    "not json", "[]", '[{"id":1,"method":"ping"}]', "{}", "42", '"str"', "null", "true",
    '{"id":1}', '{"id":{},"method":"ping"}', '{"id":[1],"method":"ping"}', '{"id":true,"method":"ping"}',
    '{"id":1,"method":7}', '{"id":1,"method":"ping","params":[]}', '{"id":1,"method":"ping","params":"x"}',
    '{"id":1,"jsonrpc":"1.0","method":"ping"}', '{"id":null,"method":"ping"}', '{"id":"s","method":"ping","extra":1}',
    '{"id":1e400,"method":"ping"}', '{"id":-0.0e-0,"method":"ping"}', '{"id":12345678901234567890123,"method":"ping"}',
    '{"id":1,"id":2,"method":"ping"}', '{"id":1,"method":"ping"} trailing', '\ufeff{"id":1,"method":"ping"}',
    '{"id":1,"method":"no.such.method"}', '{"method":"tab.select","params":{"tab":"nowhere"}}',
    '{"method":"ping","params":[]}', '{"id":1,"method":"ping","params":null}', '{"id":1,"method":"ping","params":{"x":1}}',
]
seeds["numbers"] = [
    req(1, "feedback.set", {"volume": 1}), req(2, "feedback.set", {"volume": 0}), '{"id":3,"method":"feedback.set","params":{"volume":1e400}}',
    '{"id":4,"method":"feedback.set","params":{"volume":NaN}}', '{"id":5,"method":"feedback.set","params":{"volume":-Infinity}}',
    '{"id":6,"method":"feedback.set","params":{"volume":0.30000000000000004}}', '{"id":7,"method":"feedback.set","params":{"volume":1.0000000001}}',
    '{"id":8,"method":"tab.select","params":{"index":1E0}}', '{"id":9,"method":"tab.select","params":{"index":01}}',
    '{"id":10,"method":"bar.configure","params":{"layout":{"width":1e-320}}}', '{"id":11,"method":"bar.configure","params":{"layout":{"width":100000.5}}}',
    '{"id":12,"method":"bar.configure","params":{"layout":{"height":10,"safe_bottom":11}}}',
    '{"id":13,"method":"bar.configure","params":{"layout":{"center":{"raise":-5,"width":376}}}}',
    '{"id":14,"method":"tab.select","params":{"index":' + "9" * 65 + '}}',
]
seeds["strings"] = [
    '{"id":"\\u00e9\\ud83d\\ude00","method":"ping"}', '{"id":"\\ud800","method":"ping"}', '{"id":"\\udc00x","method":"ping"}',
    '{"id":"\\x","method":"ping"}', '{"id":"tab\\u0000","method":"ping"}', '{"id":1,"method":"badge.set","params":{"tab":"chat","text":"a\\nb"}}',
    '{"id":1,"method":"badge.set","params":{"tab":"chat","text":"tab\\there"}}',
]
seeds["configure-errors"] = [
    req(1, "bar.configure", {"items": []}), req(2, "bar.configure", {"items": [{"id": "a"}, {"id": "a"}]}),
    req(3, "bar.configure", {"items": [{"id": "a", "kind": "center"}, {"id": "b"}]}),
    req(4, "bar.configure", {"items": [{"id": "a"}, {"id": "b", "kind": "center"}, {"id": "c", "kind": "center"}]}),
    req(5, "bar.configure", {"items": [{"id": str(k)} for k in range(6)]}),
    req(6, "bar.configure", {"items": [{"id": "a", "enabled": False}]}), req(7, "bar.configure", {"items": [{"id": "a"}], "selected": "zz"}),
    req(8, "bar.configure", {"items": [{"id": "a", "kind": "action"}, {"id": "b"}], "selected": "a"}),
    req(9, "bar.configure", {}), req(10, "bar.configure", {"items": [{"id": "a", "frame": None, "presentation": {}}]}),
    req(11, "bar.configure", {"items": [{"id": "a", "colour": "red"}]}), req(12, "bar.configure", {"items": [1]}),
]
seeds["notifications"] = [note("tab.select", {"tab": "chat"}), note("badge.set", {"tab": "me", "count": 3}), note("nope"), note("tab.select", {"tab": 1}), req(1, "state.get")]
seeds["actions"] = [
    req(1, "action.trigger", {"tab": "post"}), req(2, "action.trigger", {"tab": "chat"}), req(3, "action.finish", {"tab": "chat"}),
    req(4, "action.finish", {"tab": "post"}), req(5, "action.finish", {"tab": "post"}),
    req(6, "bar.configure", {"items": [{"id": "home"}, {"id": "post", "kind": "center", "enabled": False}, {"id": "me"}]}),
    req(7, "action.trigger", {"tab": "post", "source": "program"}), req(8, "action.trigger", {"tab": "zz"}),
]

seeds["touch"] = [
    req(1, "touch", {"phase": "down", "x": 300, "y": 20}), req(2, "touch", {"phase": "up", "x": 300, "y": 20}),
    req(3, "touch", {"phase": "down", "x": 187, "y": -10, "touch_id": 7}), req(4, "touch", {"phase": "up", "x": 187, "y": -10, "touch_id": 7}),
    req(5, "touch", {"phase": "down", "x": 160, "y": -20}), req(6, "touch", {"phase": "cancel", "x": 0, "y": 0}),
    req(7, "touch", {"phase": "up", "x": 10, "y": 10}), req(8, "touch", {"phase": "down", "x": -1, "y": 500}),
    req(9, "bar.configure", {"settings": {"commit_on": "down", "center_corners": "swallow"}}),
    req(10, "touch", {"phase": "down", "x": 30, "y": 5}), req(11, "touch", {"phase": "down", "x": 340, "y": 5, "touch_id": 7}),
    req(12, "tab.highlight", {"tab": "chat", "phase": "begin"}), req(13, "tab.highlight", {"tab": "chat", "phase": "end"}),
    req(14, "tab.highlight", {"tab": "me", "phase": "cancel"}),
]
seeds["visibility"] = [
    req(1, "bar.set_hidden", {"hidden": True}), req(2, "bar.set_hidden", {"hidden": False, "animated": False}),
    req(3, "nav.push", {"hides_bar": True}), req(4, "nav.push", {"hides_bar": False}), req(5, "nav.pop"), req(6, "nav.pop"), req(7, "nav.pop"),
    req(8, "scroll", {"dy": 30}), req(9, "scroll", {"dy": -50}), req(10, "scroll", {"dy": 1e300}),
    req(11, "bar.set_hidden", {"hidden": True, "reason": "push"}), req(12, "bar.set_hidden", {"hidden": True, "reason": "scroll", "animated": True}),
    req(13, "bar.configure", {"settings": {"hide_duration_ms": 0, "scroll_threshold": 0}}), req(14, "scroll", {"dy": 1}), req(15, "state.get"),
]
seeds["animation"] = [
    req(1, "bar.configure", {"settings": {"animation": "bounce", "sounds": {"select": "none", "animations": {"pulse": "click"}}}}),
    req(2, "tab.select", {"tab": "chat"}), req(3, "animation.begin", {"kind": "pulse", "tab": "chat", "duration_ms": 200}),
    req(4, "animation.begin", {"kind": "spin", "duration_ms": 0}), req(5, "animation.end", {"animation": 1}),
    req(6, "animation.end", {"animation": 1, "reason": "cancelled"}), req(7, "animation.end", {"animation": 99}),
    req(8, "bar.configure", {"items": [{"id": "a", "animation": "crossfade"}, {"id": "b", "animation": "slide"}]}),
    req(9, "tab.select", {"tab": "b"}), req(10, "state.get"),
]
seeds["settings"] = [
    req(1, "bar.configure", {"settings": {"max_count": 9, "max_chars": 1, "action_badges": True}}),
    req(2, "badge.set", {"tab": "chat", "count": 10}), req(3, "badge.set", {"tab": "me", "text": "ab"}), req(4, "badge.set", {"tab": "post", "dot": True}),
    req(5, "badge.set", {"tab": "chat", "hidden": True}), req(6, "badge.set", {"tab": "chat", "count": 3, "hidden": False}),
    req(7, "bar.configure", {"settings": {"max_count": 99, "max_chars": 16, "action_badges": False}}),
    req(8, "bar.configure", {"items": [{"id": "home", "hidden_badge": {"count": 4}}, {"id": "me", "badge": {"text": "x"}, "hidden_badge": {"dot": True}}]}),
    req(9, "sound.reload"), req(10, "bar.configure", {"settings": {"sounds": {"select": ""}}}),
]

seeds["fast-select"] = [
    '{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":2,"source":"program"}}',
    '{"jsonrpc":"2.0","id":2,"method":"tab.select","params":{"tab":"chat"}}',
    '{ "params" : { "source" : "user" , "tab" : "me" } , "method" : "tab.select" , "id" : "s-3" , "jsonrpc" : "2.0" }',
    '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tab.select","params":{"index":4}}',
    '{"jsonrpc":"2.0","id":5,"method":"tab.select","params":{"index":-0}}',
    '{"jsonrpc":"2.0","id":6,"method":"tab.select","params":{"index":999999999999999}}',
    '{"jsonrpc":"2.0","id":7,"method":"tab.select","params":{"tab":"ch\\u0061t"}}',
    '{"jsonrpc":"2.0","id":8,"method":"tab.select","params":{"index":1,"index":2}}',
    '{"jsonrpc":"2.0","id":9,"method":"tab.select","params":{"index":1.0}}',
    '{"jsonrpc":"2.0","id":-0,"method":"tab.select","params":{"index":1e0}}',
]

def write(name, data):
    with open(os.path.join(out, "seed-" + name), "wb") as f:
        f.write(data)

for name, lines in seeds.items():
    write(name, ("\n".join(lines) + "\n").encode())
    write(name + "-crlf-noeol", "\r\n".join(lines).encode())
# Raw bytes the text form cannot carry.
write("invalid-utf8", b'{"id":1,"method":"tab.select","params":{"tab":"\xff\xfe"}}\n\xc3\x28\n{"id":2,"method":"p\xc0\xafng"}\n'
      b'{"id":3,"method":"ping","params":{"t":"\xed\xa0\x80"}}\n{"id":4,"method":"ping"}\n')
write("nul-bytes", b'{"id":1,"method":"ping"}\x00\n\x00\n{"id":2,"method":"pi\x00ng"}\n{"id":3,"method":"ping"}\n')
write("deep-nesting", b"[" * 70 + b"]" * 70 + b"\n" + b'{"id":1,"method":"ping","params":' + b'{"a":' * 64 + b"1" + b"}" * 64 + b"}\n")
write("overlong-line", b'{"id":1,"method":"badge.set","params":{"tab":"chat","text":"' + b"x" * 1100 + b'"}}\n{"id":2,"method":"ping"}\n')
write("half-line", b'{"id":1,"method":"ping"}\n{"id":2,"method":"tab.se')
write("blank-lines", b"\n\r\n \t \r\n\n" + b'{"id":1,"method":"ping"}\r\n\r\r\n')
print(f"wrote {len(os.listdir(out))} files to {out}")
