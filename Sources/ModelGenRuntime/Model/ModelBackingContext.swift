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
    /// The model of `backing`, registered under row `id`, is going away.
    func forget(_ backing: ModelBackingData, id: Int64)
    /// Whether `pendingValueChanged` has anything to do (some index of unsaved values exists).
    var indexesPendingValues: Bool { get }
    /// An attribute of an object of this context changed from `old`.
    func pendingValueChanged(_ backing: ModelBackingData, attribute: Int, from old: SQLiteValue)
}
