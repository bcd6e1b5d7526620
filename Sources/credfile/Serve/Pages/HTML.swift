/// HTML built only from markup written in the source and values escaped on the way in
/// (SPEC §11's pages): the one way the portal's pages are made, so no user text (a name,
/// a group, `portal-title`, `rd`) is ever concatenated into markup.
///
///     let page: HTML = "<p class=\"user\">\(name)</p>"   // name is escaped
///
/// A string literal's pieces are markup; every interpolated `String` is escaped (`&`, `<`,
/// `>`, `"`, `'`), and an interpolated `HTML` is kept as it is. There is no initializer
/// from a run-time `String`.
struct HTML: ExpressibleByStringInterpolation, Sendable, Equatable {
    /// The markup, ready to send.
    private(set) var rendered: String

    /// Markup from a literal without interpolations.
    init(stringLiteral literal: StaticString) {
        rendered = literal.description
    }

    /// Markup from a literal with interpolations.
    init(stringInterpolation: Interpolation) {
        rendered = stringInterpolation.rendered
    }

    /// The pieces of an interpolated literal: markup and escaped values.
    struct Interpolation: StringInterpolationProtocol {
        var rendered = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            rendered.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        /// A piece of the literal itself: markup written in the source.
        mutating func appendLiteral(_ literal: StaticString) { rendered += literal.description }

        /// Text: escaped.
        mutating func appendInterpolation(_ text: String) { rendered += HTML.escape(text) }

        /// Markup made by this type: kept.
        mutating func appendInterpolation(_ html: HTML) { rendered += html.rendered }

        /// Pieces of markup made by this type, one after the other.
        mutating func appendInterpolation(_ pieces: [HTML]) { for piece in pieces { rendered += piece.rendered } }
    }

    /// Nothing.
    static let empty: HTML = ""

    /// `text` with `&`, `<`, `>`, `"` and `'` as character references, safe in an element's
    /// text and in a double- or single-quoted attribute value.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
