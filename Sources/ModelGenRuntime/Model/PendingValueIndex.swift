/// The unsaved objects (inserted or changed) of one entity by the current value of one of its
/// attributes: the only unsaved objects a fetch whose predicate requires that attribute to equal
/// a value can find. With it, looking an object up before inserting or changing each of many costs
/// the same for the last as for the first. A context keeps one per entity and attribute it was
/// asked about, in step with every change, until it saves or rolls back.
///
/// Values are compared as the store compares them (`SQLValue`: texts by their bytes), which for
/// the kinds `PendingValueIndex.indexes(_:)` admits finds exactly the objects holding the value
/// asked for (not one holding `"e\u{301}"` for `"é"`); the fetch's own test of each object stays.
final class PendingValueIndex {
    let attribute: Int
    private var buckets: [SQLValue: [ObjectIdentifier: any PersistentModel]] = [:]

    /// An index of `objects` (unsaved objects of one entity) by attribute `attribute`.
    init(attribute: Int, objects: some Sequence<any PersistentModel>) {
        self.attribute = attribute
        for object in objects { add(object) }
    }

    /// Whether values of this kind that the store finds equal are equal as `SQLValue`s, on both
    /// backends: integers and booleans by value, texts (UUIDs among them, always written in one
    /// spelling) and bytes byte for byte. Not reals and dates (a store may hold `1` where the
    /// object holds `1.0`), nor `Decimal` digits (compared through a collation: `1.0` is `1`).
    static func indexes(_ kind: QueryValueKind) -> Bool {
        switch kind {
        case .integer, .bool, .text, .uuid, .blob: return true
        case .real, .date, .decimal: return false
        }
    }

    func add(_ object: any PersistentModel) {
        buckets[object.persistentBackingData.storedValue(attribute), default: [:]][ObjectIdentifier(object)] = object
    }

    func remove(_ object: any PersistentModel, value: SQLValue) {
        buckets[value]?[ObjectIdentifier(object)] = nil
        if buckets[value]?.isEmpty == true { buckets[value] = nil }
    }

    /// The object's attribute changed from `old`.
    func move(_ object: any PersistentModel, from old: SQLValue) {
        remove(object, value: old)
        add(object)
    }

    /// The objects whose attribute now holds `value`.
    func objects(withValue value: SQLValue) -> [any PersistentModel] {
        buckets[value].map { Array($0.values) } ?? []
    }
}

extension QueryCondition {
    /// The terms the condition requires, `column == value` on the root row, in the order written
    /// (those of an `and`, at any depth; none of an `or` or a `not`).
    var requiredEqualities: [(column: String, value: SQLValue, kind: QueryValueKind)] {
        switch self {
        case let .comparison(.path(path), .equal, .value(value, kind)) where path.hops.isEmpty,
             let .comparison(.value(value, kind), .equal, .path(path)) where path.hops.isEmpty:
            return [(path.column, value, kind)]
        case let .and(conditions):
            return conditions.flatMap(\.requiredEqualities)
        default:
            return []
        }
    }

    /// The first term the condition requires whose kind `PendingValueIndex` indexes, on an
    /// attribute of `entity`: the attribute's index and the value.
    func indexableEquality(on entity: EntityDescription) -> (attribute: Int, value: SQLValue)? {
        for term in requiredEqualities where PendingValueIndex.indexes(term.kind) {
            if let attribute = entity.attributeIndex(ofColumn: term.column) { return (attribute, term.value) }
        }
        return nil
    }
}
