/// A class generated from a schema entity, managed by a `ModelContext` (SwiftData's `PersistentModel`).
/// Equal and hashed by identity, as SwiftData's models are.
public protocol PersistentModel: AnyObject, Hashable {
    /// The entity's metadata: table, columns, relationships and their rules.
    static var entity: EntityDescription { get }
    /// The object's state: values, relationships, id and context.
    var persistentBackingData: ModelBackingData { get }
    /// Creates an object for a row the context loads.
    init(backingData: ModelBackingData)
    /// The name of the stored property a key path denotes, for `#Predicate` and `SortDescriptor`.
    static func propertyName(for keyPath: AnyKeyPath) -> String?
    /// For a key path through a to-one relationship to a stored attribute of its target
    /// (`\Animal.category?.name`), the relationship, the target's model and the attribute, for
    /// `SortDescriptor`; nil for any other (the default, for models without such relationships).
    static func relatedPropertyName(for keyPath: AnyKeyPath) -> (relationship: String, target: any PersistentModel.Type, property: String)?
}

extension PersistentModel {
    public static func relatedPropertyName(for keyPath: AnyKeyPath) -> (relationship: String, target: any PersistentModel.Type, property: String)? { nil }
}

/// Identifies a model object: its entity and row id once saved, a temporary identity before.
public struct PersistentIdentifier: Hashable, Sendable, Codable, CustomStringConvertible {
    public var entity: String
    /// The row id; nil until the object is first saved.
    public var id: Int64?
    let temporary: ObjectIdentifier?

    public var description: String { "\(entity)#\(id.map(String.init) ?? "new")" }

    /// The identifier of the saved object of `entity` whose row id is `id`.
    public init(entity: String, id: Int64) {
        self.init(entity: entity, id: id, temporary: nil)
    }

    private enum CodingKeys: String, CodingKey { case entity, id }

    /// An identifier decodes as a saved object's (a temporary one has no meaning in another process).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(entity: try container.decode(String.self, forKey: .entity), id: try container.decodeIfPresent(Int64.self, forKey: .id), temporary: nil)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entity, forKey: .entity)
        try container.encodeIfPresent(id, forKey: .id)
    }

    init(entity: String, id: Int64?, temporary: ObjectIdentifier?) {
        self.entity = entity
        self.id = id
        self.temporary = temporary
    }

    public static func == (lhs: PersistentIdentifier, rhs: PersistentIdentifier) -> Bool {
        lhs.entity == rhs.entity && (lhs.id != nil || rhs.id != nil ? lhs.id == rhs.id : lhs.temporary == rhs.temporary)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entity)
        if let id { hasher.combine(id) } else { hasher.combine(temporary) }
    }
}

extension PersistentModel {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// The object's identity (SwiftData's `persistentModelID`).
    public var persistentModelID: PersistentIdentifier {
        let backing = persistentBackingData
        return PersistentIdentifier(entity: Self.entity.name, id: backing.id, temporary: backing.id == nil ? ObjectIdentifier(self) : nil)
    }

    /// The context managing the object; nil before `insert` and after its deletion is saved.
    public var modelContext: ModelContext? { persistentBackingData.context as? ModelContext }

    /// True after `ModelContext.delete` and until the context saves or rolls back.
    public var isDeleted: Bool { persistentBackingData.isDeleted }

    /// True when the object has changes the context has not saved.
    public var hasChanges: Bool { persistentBackingData.isChanged || persistentBackingData.id == nil }
}

/// The objects a query makes, each retained once as it comes, then moved into a `[Model]` (both
/// backends' fetches): no array of existentials to copy from (each element retained again, then
/// released with that array), and no generic `append` (a context's generic methods are not
/// specialized for the app's model classes, and there each call looks the array type's metadata
/// up). Objects not taken (a query that failed halfway) are released with it.
@_spi(Backend) public final class ObjectsMade {
    private var objects: [Unmanaged<AnyObject>] = []

    @_spi(Backend) public init() {}

    @_spi(Backend) public func append(_ object: any PersistentModel) { objects.append(.passRetained(object)) }

    /// The objects, as `Model`s (which they must be: a context's registry holds only `Model`s for
    /// `Model.entity`), in the order they came; none is left here.
    @_spi(Backend) public func take<Model: PersistentModel>(as _: Model.Type) -> [Model] {
        let taken = [Model](unsafeUninitializedCapacity: objects.count) { buffer, initialized in
            for (index, object) in objects.enumerated() {
                (buffer.baseAddress! + index).initialize(to: unsafeDowncast(object.takeRetainedValue(), to: Model.self))
            }
            initialized = objects.count
        }
        objects = []
        return taken
    }

    deinit {
        for object in objects { object.release() }
    }
}
