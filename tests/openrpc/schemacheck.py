"""Checks what tabbard sends against its OpenRPC document (docs/openrpc.json, what `rpc.discover`
answers): every reply to a method against the method's result schema or its listed errors, every
notification against `x-hello` or its event's `x-events` params schema. Uses `jsonschema` (PyPI).

    check = SchemaCheck(json.load(open("docs/openrpc.json")))
    check.reply("tab.select", reply)     # raises Mismatch if the reply breaks the document
    check.notification(msg)
"""

import jsonschema

# Errors any line can get, whatever its method: the envelope's (docs/PROTOCOL.md, Errors).
ENVELOPE_KINDS = {"parse_error", "invalid_request", "line_too_long", "batch_unsupported", "method_not_found",
                  "permission_denied"}


class Mismatch(AssertionError):
    pass


def _validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


class SchemaCheck:
    def __init__(self, doc):
        self.doc = doc
        self.methods = {m["name"]: m for m in doc["methods"]}
        self.results = {m["name"]: _validator(m["result"]["schema"]) for m in doc["methods"]}
        self.params = {m["name"]: _validator(m["x-params-schema"]) for m in doc["methods"]}
        self.error_kinds = {m["name"]: {e["data"]["kind"]: e["code"] for e in m["errors"]} for m in doc["methods"]}
        self.events = {e["name"]: _validator(e["params"]) for e in doc["x-events"]}
        self.hello = _validator(doc["x-hello"]["params"])
        self.error_shape = _validator({
            "type": "object", "required": ["code", "message", "data"],
            "properties": {"code": {"type": "integer"}, "message": {"type": "string", "minLength": 1},
                           "data": {"type": "object", "required": ["kind"], "properties": {"kind": {"type": "string"}}}}})
        self.counts = {"replies": 0, "errors": 0, "events": 0}

    @staticmethod
    def _fail(validator, value, what):
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            raise Mismatch("%s breaks the document at %s: %s\n%.600s" % (what, "/".join(map(str, e.absolute_path)) or "(top)",
                                                                         e.message, value))

    def params_valid(self, method, params):
        """Whether `params` ({} when none) is valid for `method` by its x-params-schema."""
        return self.params[method].is_valid(params)

    def error(self, method, err):
        """Checks an error object; `method` None when the line had none we know."""
        self._fail(self.error_shape, err, "error of %s" % method)
        kind, code = err["data"]["kind"], err["code"]
        self.counts["errors"] += 1
        if kind in ENVELOPE_KINDS:
            return
        if method not in self.methods:
            raise Mismatch("error %s for a line without a known method (%s): %r" % (kind, method, err))
        listed = self.error_kinds[method]
        if kind not in listed:
            raise Mismatch("%s returned %s, which its document does not list (%s)" % (method, kind, sorted(listed)))
        if listed[kind] != code:
            raise Mismatch("%s: %s has code %s, the document says %s" % (method, kind, code, listed[kind]))

    def reply(self, method, msg):
        if "error" in msg:
            return self.error(method, msg["error"])
        if method not in self.results:
            raise Mismatch("a result for a line without a known method (%s): %.300r" % (method, msg))
        self.counts["replies"] += 1
        self._fail(self.results[method], msg.get("result"), "result of %s" % method)

    def notification(self, msg):
        name, params = msg.get("method"), msg.get("params", {})
        if name == "hello":
            return self._fail(self.hello, params, "hello")
        if name not in self.events:
            raise Mismatch("event %r is not in the document's x-events" % name)
        self.counts["events"] += 1
        self._fail(self.events[name], params, "event %s" % name)
