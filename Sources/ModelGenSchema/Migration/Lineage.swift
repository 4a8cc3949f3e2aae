/// Which element of an earlier version each element of a schema continues: among entities, among
/// the members (attributes and relationships) of an entity, among the cases of an enumeration.
///
/// Identity is by name or by a declared `originalName`, never guessed: an element may continue an
/// old element that has its name, or one whose name it lists as an original name, if their
/// histories agree. An element's history is its name and then its original names, latest first
/// (`name`, `originalName: [title, heading]`: name ← title ← heading), and so is an old element's,
/// as its version declared it. They agree when the names the new history gives before the old
/// element's name are the old history's own, or the first of them (a schema may drop its oldest
/// original names; but an old element whose version says it was first named `title` is not one
/// that was `heading` before). When several could, an old element whose history is how the new
/// one's ends is that element at an earlier version, and among those the longest history is the
/// closest (the same element at the same version first); at equal length a declared rename comes
/// before a name that is merely the same. Only then come the others: an original name, in the
/// order listed, before the same name. So two elements may exchange names (`Alpha` ⇄ `Beta`, each
/// declaring the other's name), and a name given up may be taken by a new element:
///
///     v1: title          v2: name (originalName: title)          v3: name (originalName: title), title
///
/// A v1 store's `title` becomes v3's `name`; a v2 or v3 store's `name` stays `name`, and a v3
/// store's `title` stays `title`.
public enum Lineage {
    /// An element of one version: its name and the names it declares it had before, latest first.
    public struct Element {
        public var name: String
        public var originalNames: [String]

        public init(name: String, originalNames: [String]) {
            self.name = name
            self.originalNames = originalNames
        }

        var history: [String] { [name] + originalNames }
    }

    /// What each element of a new version continues.
    public struct Matches {
        /// For each new element, by position, the position of the old element it continues, or nil
        /// for a new element. Each old element is continued by at most one new one.
        public var continued: [Int?]
        /// Old elements that two or more new elements could continue with equal right (two
        /// histories that end alike): the first of them, in the schema's order, continues it.
        public var ambiguous: [(old: Int, new: [Int])]
    }

    /// Which of `old` (a stored version's elements of one scope) each of `new` continues.
    public static func match(old: [Element], new: [Element]) -> Matches {
        let oldByName = Dictionary(old.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        var links: [(rank: Rank, new: Int, old: Int)] = []
        for (position, element) in new.enumerated() {
            let history = element.history
            // A name may come back in a history (p ← q ← p): each old element by its strongest link.
            var strongest: [Int: Rank] = [:]
            for (index, name) in history.enumerated() {
                guard let candidate = oldByName[name], let rank = Rank(new: history, old: old[candidate].history, at: index) else { continue }
                if strongest[candidate].map({ rank < $0 }) ?? true { strongest[candidate] = rank }
            }
            links += strongest.map { (rank: $0.value, new: position, old: $0.key) }
        }
        links.sort { ($0.rank, $0.new, $0.old) < ($1.rank, $1.new, $1.old) }
        var matches = Matches(continued: [Int?](repeating: nil, count: new.count), ambiguous: [])
        var taken = Set<Int>()
        for (position, link) in links.enumerated() where matches.continued[link.new] == nil && !taken.contains(link.old) {
            matches.continued[link.new] = link.old
            taken.insert(link.old)
            let rivals = links[(position + 1)...].prefix { $0.rank == link.rank }.filter { $0.old == link.old && matches.continued[$0.new] == nil }
            if !rivals.isEmpty { matches.ambiguous.append((link.old, [link.new] + rivals.map(\.new))) }
        }
        return matches
    }

    /// How strongly a link says that a new element continues an old one: lower is stronger.
    struct Rank: Comparable {
        /// 0 when the old history is how the new one ends, else 1.
        var tier: Int
        /// Minus the length of that history (the longest first), or 0.
        var closeness: Int
        /// 0 for a link through an original name, 1 for the same name.
        var sameName: Int
        /// The position of the old element's name in the new history.
        var position: Int

        /// The link of new history `new` to old history `old`, whose name is `new[index]`; nil
        /// when the histories disagree: the names `new` gives the element before `new[index]` must
        /// be those `old` gives it, or fewer of them (a schema may drop its oldest original names,
        /// but an element the store says was first named `new[index]` is not one that had another
        /// name before).
        init?(new: [String], old: [String], at index: Int) {
            let before = new[(index + 1)...]
            guard before.count <= old.count - 1, Array(before) == Array(old[1...].prefix(before.count)) else { return nil }
            let endsAlike = before.count == old.count - 1
            tier = endsAlike ? 0 : 1
            closeness = endsAlike ? -old.count : 0
            sameName = index == 0 ? 1 : 0
            position = index
        }

        static func < (lhs: Rank, rhs: Rank) -> Bool {
            (lhs.tier, lhs.closeness, lhs.sameName, lhs.position) < (rhs.tier, rhs.closeness, rhs.sameName, rhs.position)
        }
    }
}

extension Lineage.Element {
    init(_ entity: Entity) { self.init(name: entity.name, originalNames: entity.originalNames) }
    init(_ attribute: Attribute) { self.init(name: attribute.name, originalNames: attribute.originalNames) }
    init(_ relationship: Relationship) { self.init(name: relationship.name, originalNames: relationship.originalNames) }

    /// The cases of `enumeration`, each with the names it declares it had.
    static func cases(of enumeration: EnumType) -> [Lineage.Element] {
        enumeration.cases.map { Lineage.Element(name: $0, originalNames: enumeration.caseOriginalNames[$0] ?? []) }
    }
}
