/// A string as every encoder writes it: its JSON text, quoted and escaped exactly as
/// `ByteBuffer.string` writes strings, made once — an item's id when it is set
/// (`Item.idText`), a method's name for its journal lines. Replies, events and journal
/// lines carry it instead of the `String`, so writing it is a copy of its bytes, not a
/// quoting pass. One reference: copying it is a retain, and it keeps the outputs that
/// carry it as small as they were with a `String`. (Its bytes held inline instead made
/// every reply and event too large to be copied without the enums' value witnesses, and
/// the request dearer: docs/PERFORMANCE.md, "Outcomes and encoders".)
public struct QuotedText: Equatable, Sendable, CustomStringConvertible {
    /// The JSON text.
    public let text: [UInt8]

    /// The JSON text of `string`.
    public init(_ string: String) {
        text = ByteBuffer.collect { $0.string(string) }
    }

    public var description: String { String(decoding: text, as: UTF8.self) }

    /// Room `write(into:)` needs in a buffer.
    var room: Int { @inline(__always) get { text.count } }

    /// Appends the text.
    @inline(__always)
    func write(into o: inout ByteBuffer) {
        text.withUnsafeBufferPointer { o.append($0) }
    }

    /// `write` in room already reserved (`room`).
    @inline(__always)
    func writeUnchecked(into o: inout ByteBuffer) {
        text.withUnsafeBufferPointer { o.uncheckedAppend($0) }
    }
}

extension ByteBuffer {
    /// A quoted text, or `null`.
    @inline(__always)
    mutating func optional(_ t: QuotedText?) {
        if let t { t.write(into: &self) } else { put("null") }
    }
}

extension Item {
    /// The JSON text of `id`'s item in `items`, or of `id` itself when no item has it (an id
    /// the bar no longer holds).
    @inline(__always)
    static func text(of id: String, in items: [Item]) -> QuotedText {
        for k in items.indices where items[k].id == id { return items[k].idText }
        return QuotedText(id)
    }
}
