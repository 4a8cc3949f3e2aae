/// What a model object's backing data asks of the context that manages it. The SQLite
/// `ModelContext` conforms, and so does the context of the PostgreSQL backend (`ModelGenPostgres`);
/// apps never call it.
@_spi(Backend) public protocol ModelBackingContext: AnyObject {
    /// A saved object of this context has its first unsaved change.
    func didChange(_ backing: ModelBackingData)
    /// An object of this context became related to `model`, which is new and in no context: it
    /// joins this one, with the new objects it refers to (as SwiftData does).
    func insertGraph(_ model: any PersistentModel)
    /// Relationship `index` of `backing`, an object of this context, is used and was not loaded
    /// (`foreignID` is its key when the key is a column of the object's row): its state now, or
    /// nil when this context loads only on request and cannot tell from the objects it holds.
    func load(_ index: Int, of backing: ModelBackingData, foreignID: Int64?) -> ModelBackingData.RelationshipState?
    /// The app read relationship `index` of `backing`, which `load` could not give: stops with a
    /// message saying how to load it.
    func relationshipNotLoaded(_ index: Int, of backing: ModelBackingData) -> Never
    /// Relationship `index` of `backing`, whose links are in the partners' rows or a join table
    /// (the side of a one-to-one, a one-to-many, a many-to-many), was not loaded (`load` gave nil)
    /// and now refers to other objects or to none: the objects that held `backing` are not known.
    /// The context lets go of those it no longer refers to, as a context that reads the
    /// relationship would: the objects it holds whose key or list names `backing`, now, and at the
    /// save the rows that hold it then (a many-to-many's list replaced so saves its members anew:
    /// `ModelList.replacesStoredMembers`).
    func relationshipReplacedUnread(_ backing: ModelBackingData, through index: Int)
    /// Relationship `index` of `backing`, a many-to-many list that was not loaded (`load` gave
    /// nil), gained `member`: its list of the other side holds `backing` now. The context notes
    /// it, should `backing`'s list be replaced unread later (`relationshipReplacedUnread`).
    func listNotLoadedGained(_ member: ModelBackingData, _ backing: ModelBackingData, through index: Int)
    /// The model of `backing`, registered under row `id`, is going away.
    func forget(_ backing: ModelBackingData, id: Int64)
    /// Whether `pendingValueChanged` has anything to do (some index of unsaved values exists).
    var indexesPendingValues: Bool { get }
    /// An attribute of an object of this context changed from `old`.
    func pendingValueChanged(_ backing: ModelBackingData, attribute: Int, from old: SQLiteValue)
    /// The reference by which this context's objects know it.
    var objectReference: ContextReference { get }
}

/// How the objects of a context refer to it: one reference per context, shared by all its
/// objects and cleared when the context goes, so an object outliving its context sees none (as a
/// weak reference would). A weak reference per object would give the context a side table, which
/// sends every retain and release of the context down the runtime's slow path, and each object's
/// look at its context through that table.
@_spi(Backend) public final class ContextReference {
    /// The context, until it goes (its deinit calls `contextDidEnd`). Unowned and unchecked:
    /// cleared before the context is freed, and only read on the context's own thread of work.
    /// Exempt from dynamic exclusivity checks: read as every object of the context is freed.
    @_spi(Backend) @exclusivity(unchecked) public private(set) unowned(unsafe) var context: (any ModelBackingContext)?

    /// A reference to no context yet; the context gives itself with `attach`.
    @_spi(Backend) public init() {}

    /// The context this reference names (called once, from the context's initializer).
    @_spi(Backend) public func attach(_ context: any ModelBackingContext) { self.context = context }

    /// The context is going away: its objects no longer have one.
    @_spi(Backend) public func contextDidEnd() { context = nil }
}
