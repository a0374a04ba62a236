import Glibc

/// glibc's wcwidth(3): Glibc's module map does not export it (it needs _XOPEN_SOURCE).
@_silgen_name("wcwidth") private func wcwidth(_ c: wchar_t) -> Int32

/// Text as a terminal shows it: how many columns a string takes, and strings made safe to
/// print (no control characters that would move the cursor or recolour the terminal).
enum TextWidth {
    /// wcwidth needs a UTF-8 character type; C.UTF-8 is built into glibc, whatever the
    /// person's locale. Only LC_CTYPE changes, and tabbarctl formats nothing else by locale.
    private static let utf8Locale: Bool = setlocale(LC_CTYPE, "C.UTF-8") != nil

    /// Columns `s` takes on a terminal: 2 for wide (CJK, emoji) characters, 0 for combining
    /// marks (they belong to their base character), 1 otherwise.
    static func columns(_ s: String) -> Int {
        _ = utf8Locale
        var total = 0
        for character in s {
            let scalars = character.unicodeScalars
            if scalars.contains(where: { $0.value == 0xFE0F }) { total += 2; continue }  // emoji presentation
            let w = wcwidth(wchar_t(bitPattern: scalars.first!.value))
            total += w < 0 ? 1 : Int(w)
        }
        return total
    }

    /// `s` with control characters written as escapes: `\n`, `\t`, `\r`, `\\` stays `\`,
    /// other C0/C1 controls and DEL as `\x1b` / `\u{85}`.
    static func printable(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isControl) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            guard isControl(u) else { out.unicodeScalars.append(u); continue }
            switch u {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                let hex = String(u.value, radix: 16)
                out += u.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
            }
        }
        return out
    }

    static func isControl(_ u: Unicode.Scalar) -> Bool {
        u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0)
    }
}
