/// A value in a template's context: what a Mustache tag can name.
///
/// The context is typed, not `[String: Any]`: rendering looks names up in dictionaries and never
/// casts, and a template can only reach what the emitter chose to put in the context.
public enum TemplateValue: Equatable, Sendable {
    /// Rendered as is (templates produce Swift, so nothing is escaped); a truthy section value.
    case text(String)
    /// `{{#flag}}` renders its section when true; `{{flag}}` renders `true` or `false`.
    case bool(Bool)
    /// `{{#items}}` renders its section once per element, with the element on top of the context.
    case list([TemplateValue])
    /// Named values; `{{#object}}` renders its section once with the object on top of the context.
    case object([String: TemplateValue])

    /// Whether a section naming this value renders (`{{#…}}`) or its inversion does (`{{^…}}`).
    var isTruthy: Bool {
        switch self {
        case .text: true
        case let .bool(flag): flag
        case let .list(elements): !elements.isEmpty
        case .object: true
        }
    }
}
