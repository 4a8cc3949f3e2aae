import ModelGenSchema

/// How the references of one relationship are found, from the objects of one side (the
/// *subject*) to the objects they point at (the *other* side).
public enum ReferenceLink: Equatable, Sendable {
    /// The subject's own row holds the other's id: `table.column`.
    case subjectColumn(table: String, column: String)
    /// The other's row holds the subject's id: `table.column`.
    case otherColumn(table: String, column: String)
    /// A join table row per pair.
    case joinTable(name: String, subjectColumn: String, otherColumn: String)
}

/// A relationship seen from one side: `subject.relationship` → `other`, and where its references live.
public struct Traversal: Equatable, Sendable {
    public var subject: String
    public var relationship: String
    public var other: String
    public var link: ReferenceLink
}

/// A reference that a delete must not break silently, checked before anything changes.
public struct ReferenceCheck: Equatable, Sendable {
    public enum Kind: String, Equatable, Sendable {
        case deny, required, dangling
    }

    public var kind: Kind
    /// From deleted objects (subject) to the surviving objects that block the delete.
    public var traversal: Traversal
    /// The relationship at fault, as `Entity.name`.
    public var relationship: String
    /// The delete rule that applies.
    public var rule: DeleteRule
}

/// One step of collecting the objects to delete.
public enum CollectionStep: Equatable, Sendable {
    /// Follow one cascade edge (an index into `DeletionPlan.edges`) once.
    case follow(Int)
    /// Follow the edges of a cycle again and again until nothing is added.
    case followUntilStable([Int])
}

/// What deleting objects of one entity does, planned from the schema alone.
///
/// Run in one transaction: collect the closure S (cascades, through cycles); refuse when a
/// check finds a row; set survivors' references into S to NULL; break cycles inside S; remove
/// join rows touching S; delete S children first. See README "Safe deletion".
///
/// The ids of an entity are collected only when something needs them: an entity that cascades to
/// nothing and that no check, nullification, detachment or join table involves (a leaf such as a
/// sleep stage) is deleted through the keys by which its rows hang from collected parents, so its
/// rows are never copied into a temporary table.
public struct DeletionPlan: Equatable, Sendable {
    /// The entity the delete starts from.
    public var root: String
    /// Entities whose objects the delete may remove, the root first, then in collection order.
    public var closure: [String]
    /// Cascades followed inside the closure.
    public var edges: [Traversal]
    /// The steps that collect ids: every edge into a collected entity.
    public var collection: [CollectionStep]
    /// Closure entities whose ids are not collected, with the edges (indices into `edges`, each
    /// `.otherColumn`) by which their rows hang from collected parents: their rows are deleted by
    /// `DELETE … WHERE key IN (the parents' collected ids)`. Looked up, never iterated.
    public var deletedThroughParentKeys: [String: [Int]]
    public var checks: [ReferenceCheck]
    /// Foreign keys of surviving rows that point into S and are set to NULL.
    public var nullifications: [ForeignKey]
    /// Foreign keys inside S set to NULL first (a required one, of a row referring to its own
    /// table, pointed at its own row), so that no delete violates a constraint.
    public var detachments: [ForeignKey]
    /// Join tables that may hold rows touching S.
    public var joinTables: [JoinTable]
    /// Entities in delete order: an entity's rows go before the rows they reference.
    public var deletionOrder: [String]
    /// When every object of the root goes: the foreign key by which each other entity of the
    /// closure hangs from its parent. If no row has it NULL, every row of every closure entity is
    /// deleted, so each table is emptied by an unfiltered `DELETE`, children first (SQLite's
    /// fast path). Nil when something outside the closure refers into it, or the closure is not a
    /// tree of such keys; the general plan runs then.
    public var wholeTableParentKeys: [ForeignKey]?
}
