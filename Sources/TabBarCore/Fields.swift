/// The fields a method's params accept, declared once with the method (`MethodSpec`) and
/// laid out once for matching keys by their bytes.
///
/// Decoding a request's params walks its keys once (`Params.reading`): a key that is not
/// declared is refused as `Params.only` refuses it (the same error), and each declared
/// field's value is recorded in a slot. The readers after it (`int`, `choice`, `id`, …)
/// then find their field by its slot instead of walking the keys again: the literal a
/// reader names is the declaration's own (same bytes, same address), so it is found by
/// pointer, or else by its bytes; a name that is not declared is absent.
public struct Fields: Sendable, ExpressibleByArrayLiteral {
    /// The accepted names, in the order the errors list them.
    public let names: [StaticString]
    /// One entry per name, then one of length -1. Made once per declaration and never freed
    /// (declarations are static), so that params can point at it without a reference count.
    let entries: Entries

    /// Fields past this many are found by walking the keys (their slots are not kept).
    static let slotCount = 8

    /// Empties the `slotCount` slots at `slots` (the document's storage's).
    @inline(__always)
    static func clearSlots(_ slots: UnsafeMutablePointer<Int32>) {
        UnsafeMutableRawPointer(slots).storeBytes(of: (UInt64(0), UInt64(0), UInt64(0), UInt64(0)), as: (UInt64, UInt64, UInt64, UInt64).self)
    }

    /// A name's bytes, its length and its first eight bytes as a little-endian word (zero past its end).
    struct Entry {
        var name: UnsafePointer<UInt8>
        var length: Int
        var word: UInt64
    }

    /// The entries, as params carry them, and two hash tables over them (made once with
    /// them): by a name's address and by its length and first word.
    // Sendable because the entries and tables are made once with the method table and never
    // written or freed after.
    struct Entries: @unchecked Sendable {
        let base: UnsafePointer<Entry>
        /// `mask + 1` slots by address, then as many by word: an entry's index, -1 empty.
        let table: UnsafePointer<Int8>
        let mask: Int

        @inline(__always)
        static func hash(address p: UnsafePointer<UInt8>?) -> Int {
            Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: p)) &* 0x9E37_79B9_7F4A_7C15) >> 58)
        }

        @inline(__always)
        static func hash(word w: UInt64, _ n: Int) -> Int {
            Int(truncatingIfNeeded: ((w ^ UInt64(truncatingIfNeeded: n)) &* 0x9E37_79B9_7F4A_7C15) >> 58)
        }

        /// The index of the declared name `key` (bytes, no escapes), or -1: by the literal's
        /// address first (a reader names its field with the declaration's literal), then by
        /// its bytes.
        @inline(__always)
        func index(of key: UnsafeBufferPointer<UInt8>) -> Int {
            let n = key.count
            var h = Self.hash(address: key.baseAddress) & mask
            while case let j = Int(table[h]), j >= 0 {
                if base[j].name == key.baseAddress && base[j].length == n { return j }
                h = (h + 1) & mask
            }
            return indexByBytes(key)
        }

        @inline(never)
        func indexByBytes(_ key: UnsafeBufferPointer<UInt8>) -> Int {
            var j = 0
            while case let e = base[j], e.length >= 0 {
                if e.length == key.count && (key.count == 0 || memcmpEqual(e.name, key.baseAddress!, key.count)) { return j }
                j += 1
            }
            return -1
        }

        /// The index of the declared name that the `n` bytes at `p` spell, or -1. Eight bytes
        /// from `p` must be readable (a key in a document's text is: zero bytes follow the text).
        @inline(__always)
        func match(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int { match(p, n, word: Fields.word(p, n)) }

        /// `match` given the bytes' first word (`Fields.word(p, n)`, which the caller has).
        @inline(__always)
        func match(_ p: UnsafePointer<UInt8>, _ n: Int, word w: UInt64) -> Int {
            let byWord = table + mask + 1
            var h = Self.hash(word: w, n) & mask
            while case let j = Int(byWord[h]), j >= 0 {
                let e = base[j]
                if e.word == w && e.length == n && (n <= 8 || memcmpEqual(e.name + 8, p + 8, n - 8)) { return j }
                h = (h + 1) & mask
            }
            return -1
        }
    }

    public init(arrayLiteral names: StaticString...) {
        self.init(names)
    }

    public init(_ names: [StaticString]) {
        precondition(names.count <= 32, "at most 32 fields (the tables hash to six bits)")
        self.names = names
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: names.count + 1)
        for (j, name) in names.enumerated() {
            precondition(name.hasPointerRepresentation, "a field's name is a string literal")
            // (Plain ASCII, no quote or backslash: the envelope reader matches keys by their
            // bytes before it checks them, `declaredKeyEnd`.)
            precondition(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
                .allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") },
                         "field \(name) is plain printable ASCII")
            // The name's bytes followed by zeros, for its first word.
            var padded = [UInt8](repeating: 0, count: name.utf8CodeUnitCount + 8)
            for k in 0..<name.utf8CodeUnitCount { padded[k] = name.utf8Start[k] }
            let word = padded.withUnsafeBufferPointer { Fields.word($0.baseAddress!, name.utf8CodeUnitCount) }
            precondition(!names[..<j].contains { $0.description == name.description }, "field \(name) is declared twice")
            entries[j] = Entry(name: name.utf8Start, length: name.utf8CodeUnitCount, word: word)
        }
        entries[names.count] = Entry(name: UnsafePointer(bitPattern: 1)!, length: -1, word: 0)
        // Tables at least twice the names (so that a probe meets an empty slot soon), and
        // no wider than the hashes' six bits.
        var size = 8
        while size < 2 * names.count { size *= 2 }
        let table = UnsafeMutablePointer<Int8>.allocate(capacity: 2 * size)
        table.initialize(repeating: -1, count: 2 * size)
        for j in names.indices {
            var h = Entries.hash(address: entries[j].name) & (size - 1)
            while table[h] >= 0 { h = (h + 1) & (size - 1) }
            table[h] = Int8(j)
            h = Entries.hash(word: entries[j].word, entries[j].length) & (size - 1)
            while table[size + h] >= 0 { h = (h + 1) & (size - 1) }
            table[size + h] = Int8(j)
        }
        self.entries = Entries(base: entries, table: table, mask: size - 1)
    }

    /// The first (up to) eight of the `n` bytes at `p`, of which eight can be read.
    @inline(__always)
    static func word(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        let w = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
        return n >= 8 ? w : w & ((1 << (8 * UInt64(n))) &- 1)
    }
}

extension Params {
    /// Reads these params' keys by `fields`: every key is matched once against the declared
    /// names (an undeclared one refused, naming it, as `only(fields.names)` refuses it), and
    /// where each declared field's value is goes into the document's slots, which the
    /// readers use until the document reads another text.
    @inline(__always)
    func reading(_ fields: Fields) throws(RPCError) -> Params {
        guard let object else { return self }
        let s = object.doc.s
        // (Read already, as the envelope read the line: `declaredParams`.)
        if s.pointee.slotObject == object.index && s.pointee.slotFields?.base == fields.entries.base { return self }
        s.pointee.slotObject = -1
        let slots = s.pointee.slots
        Fields.clearSlots(slots)
        let tokens = object.doc.tokens, text = UnsafePointer(object.doc.bytes.baseAddress!)
        var k = object.index + 1, left = Int(tokens[object.index].count)
        while left > 0 {
            let kt = tokens[k]
            let j = kt.kind == .string ? fields.entries.match(text + Int(kt.start), Int(kt.end &- kt.start))
                : object.doc.stringBytes(k).withUnsafeBufferPointer { fields.entries.indexByBytes($0) }
            if j < 0 { throw unknown(object.doc.string(k), fields.names) }
            if j < Fields.slotCount { slots[j] = Int32(truncatingIfNeeded: k + 1) }
            k = Int(tokens[k + 1].next)
            left -= 1
        }
        s.pointee.slotFields = fields.entries
        s.pointee.slotObject = object.index
        return self
    }
}

extension JSONDocument.Tape {
    /// The value of field `name` of object `index` by the slots `Params.reading` filled:
    /// nil if that object's fields were not read so (or `name` is past the slots) — then
    /// the caller walks the keys —, else the value or `.some(nil)`, absent (every key of
    /// the object is declared: a name that is not, is not there).
    @inline(__always)
    func declaredMember(_ name: UnsafeBufferPointer<UInt8>, of index: Int) -> JSONValue?? {
        guard s.pointee.slotObject == index, let fields = s.pointee.slotFields else { return nil }
        let j = fields.index(of: name)
        if j < 0 { return .some(nil) }
        if j >= Fields.slotCount { return nil }
        let k = Int(s.pointee.slots[j])
        return .some(k == 0 ? nil : JSONValue(self, k))
    }
}

extension MethodSpec {
    /// `decode` as params were read before slots: `only(fields.names)`, then every reader
    /// walks the keys. The reference the tests compare `decode` with.
    func decodeWalking(_ params: Params, _ limits: Limits) throws(RPCError) -> Command {
        try params.only(fields.names)
        params.object.map { $0.doc.s.pointee.slotObject = -1 }  // (walked: no slots)
        return try body(params, limits)
    }
}

/// One field of a method's params as its declaration gives it (`MethodSpec`): its name (the
/// literal `Fields` matches keys by), whether it must be given, and the JSON Schema of its
/// value — what `rpc.discover`'s document says of it (`OpenRPC`). The schema is never looser
/// than the decoder: a value it allows, the decoder takes (lengths in bytes are stated as
/// characters of at most four bytes each, `Schema.string`).
public struct Field: Sendable {
    public let name: StaticString
    public let required: Bool
    public let schema: JSON
    public let summary: String

    public init(_ name: StaticString, required: Bool = false, _ schema: JSON, _ summary: String) {
        self.name = name
        self.required = required
        self.schema = schema
        self.summary = summary
    }

    /// A whole number in `range` (the safe integers unless narrower).
    public static func int(_ name: StaticString, _ range: ClosedRange<Int>, required: Bool = false, _ summary: String) -> Field {
        Field(name, required: required, Schema.integer(range), summary)
    }

    /// A safe integer.
    public static func int(_ name: StaticString, required: Bool = false, _ summary: String) -> Field {
        int(name, Params.safeIntegers, required: required, summary)
    }

    /// A finite number.
    public static func number(_ name: StaticString, required: Bool = false, _ summary: String) -> Field {
        Field(name, required: required, Schema.number(), summary)
    }

    /// A finite number, in `range` if given.
    public static func number(_ name: StaticString, _ range: ClosedRange<Double>, required: Bool = false, _ summary: String) -> Field {
        Field(name, required: required, Schema.number(range), summary)
    }

    /// A string of at most `maxBytes` UTF-8 bytes (`minLength` characters at least).
    public static func string(_ name: StaticString, minLength: Int = 0, maxBytes: Int, required: Bool = false, _ summary: String) -> Field {
        Field(name, required: required, Schema.string(minLength: minLength, maxBytes: maxBytes), summary)
    }

    /// An item id: 1 to `Limits().maxIDLength` bytes, no control characters.
    public static func id(_ name: StaticString, required: Bool = false, _ summary: String) -> Field {
        Field(name, required: required, Schema.itemID, summary)
    }

    public static func bool(_ name: StaticString, required: Bool = false, _ summary: String) -> Field {
        Field(name, required: required, Schema.boolean, summary)
    }

    /// One of an enum's wire names.
    public static func choice<E: RawRepresentable & CaseIterable>(_ name: StaticString, _ type: E.Type, required: Bool = false,
                                                                   _ summary: String) -> Field where E.RawValue == String {
        Field(name, required: required, Schema.choice(E.self), summary)
    }
}
