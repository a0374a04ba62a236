/// JSON written as Swift literals: `["tab": "chat", "count": 3, "dot": true, "items": [["id": "home"]]]`.
/// A dictionary literal keeps its members in the order written; `nil` is `null`.
extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// `nil` → `null`.
    public init(nilLiteral: ()) { self = .null }
    /// `true` / `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A whole number.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A number with a fraction (`JSON.double`: written without one when it is whole).
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    /// An object, its members in the order written.
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements.map { Member($0.0, $0.1) }) }
}

extension JSON {
    /// The elements, if this is an array.
    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }
}
