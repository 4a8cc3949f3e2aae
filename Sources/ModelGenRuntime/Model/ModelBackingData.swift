/// The state of one model object: attribute values, relationship references (loaded lazily),
/// its row id and its context. Generated accessors read and write through it; it keeps inverse
/// relationships in sync in memory.
///
/// One allocation holds it all: the object's state (`State`) and, after it, its values (a
/// `ManagedBuffer`'s header and elements). An object a fetch makes costs two allocations, this
/// and its model, instead of three with the values in an array of their own.
public final class ModelBackingData: ManagedBuffer<ModelBackingData.State, SQLiteValue>, ModelBackingDataInitializers {
    /// What an object holds besides its values. Internal to the runtime; public only because a
    /// `ManagedBuffer`'s header type is part of the class's declaration.
    public struct State {
        let entity: EntityDescription
        var id: Int64?
        var isDeleted = false
        var isChanged = false
        /// Deleted before it was ever saved: the objects it refers to forgot it.
        var isDetached = false
        /// The relationships changed since the object was last saved or its relationships
        /// unloaded (set by the app, or an inverse following a change of the other side).
        var changedRelationships = ChangedRelationships()
        var contextReference: ContextReference?
        var savedValues: [SQLiteValue]?
        var relationshipStates: [RelationshipState]?
        var changedAttributes = AttributeIndexes()
        unowned(unsafe) var object: (any PersistentModel)?
    }

    // The state is read and written through a pointer to the header: no dynamic exclusivity
    // check (each costs a thread-local lookup, and the runtime never holds two accesses to one of
    // these at once), and collections in it change in place.
    private var state: UnsafeMutablePointer<State> { withUnsafeMutablePointerToHeader { $0 } }
    /// The values: `entity.valueCount` of them, in the allocation after the state.
    private var values: UnsafeMutablePointer<SQLiteValue> { withUnsafeMutablePointerToElements { $0 } }

    /// A new backing data for `entity`, its state made by `state` and its values by `value`
    /// (slot by slot, in `values`' layout).
    static func make(entity: EntityDescription, state: () -> State, value: (Int) -> SQLiteValue) -> ModelBackingData {
        let made = unsafeDowncast(create(minimumCapacity: entity.valueCount) { _ in state() }, to: ModelBackingData.self)
        let values = made.values
        for slot in 0..<entity.valueCount { (values + slot).initialize(to: value(slot)) }
        return made
    }

    deinit {
        modelDidEnd()
        values.deinitialize(count: entity.valueCount)
    }

    public var entity: EntityDescription { state.pointee.entity }
    /// The row id, once saved or loaded.
    public internal(set) var id: Int64? {
        get { state.pointee.id }
        set { state.pointee.id = newValue }
    }
    var isDeleted: Bool {
        get { state.pointee.isDeleted }
        set { state.pointee.isDeleted = newValue }
    }
    var isChanged: Bool {
        get { state.pointee.isChanged }
        set { state.pointee.isChanged = newValue }
    }
    /// The context managing the object: nil before it is inserted, after its deletion is saved
    /// and once the context is gone.
    var context: (any ModelBackingContext)? {
        get { contextReference?.context }
        set { contextReference = newValue?.objectReference }
    }
    /// The reference to the context: nil before the object is inserted and after it leaves its
    /// context; kept, naming no context, when the context is freed while the app keeps the object.
    private var contextReference: ContextReference? {
        get { state.pointee.contextReference }
        set { state.pointee.contextReference = newValue }
    }
    // The values are those of all attributes (transient ones too), in schema order, then one slot
    // per key column (`EntityDescription.keySlots`): a row's columns but its id. The key slots
    // hold the keys as last saved or loaded; the keys now live in `relationships`.
    /// Values and keys as last saved or loaded, kept from the first change after that (for
    /// rollback, and for the keys of relationships not loaded); nil while the values are the
    /// saved ones, and for an object never saved (rollback discards it anyway). An object loaded
    /// and only read keeps no second copy of its values.
    private var savedValues: [SQLiteValue]? {
        get { state.pointee.savedValues }
        set { state.pointee.savedValues = newValue }
        _modify { yield &state.pointee.savedValues }
    }
    /// The state of each relationship, or nil while every one is unloaded with the key it was
    /// saved or loaded with: an object loaded from a row needs no array of states until a
    /// relationship of it is used.
    private var relationshipStates: [RelationshipState]? {
        get { state.pointee.relationshipStates }
        set { state.pointee.relationshipStates = newValue }
        _modify { yield &state.pointee.relationshipStates }
    }
    /// Attributes set since the last save or load: an update writes only their columns (a new
    /// object, whose insert writes every column, keeps none).
    var changedAttributes: AttributeIndexes {
        get { state.pointee.changedAttributes }
        set { state.pointee.changedAttributes = newValue }
        _modify { yield &state.pointee.changedAttributes }
    }
    /// The model object owning this backing data (registered by the context or by the model's
    /// init). Unowned and unchecked, not weak: the model owns its backing data and clears this in
    /// its deinit (`modelDidEnd`), so it outlives every use here; a weak reference would give every
    /// model a side table, which sends each of its retains and releases down the runtime's slow
    /// path, and a checked unowned one keeps the model's memory until the backing data goes.
    var object: (any PersistentModel)? {
        get { state.pointee.object }
        set { state.pointee.object = newValue }
    }

    /// The state of each relationship; changing one makes the array of states.
    var relationships: [RelationshipState] {
        get { relationshipStates ?? unloadedStates() }
        set { relationshipStates = newValue }
        _modify {
            if relationshipStates == nil { relationshipStates = unloadedStates() }
            yield &relationshipStates!
        }
    }

    private func unloadedStates() -> [RelationshipState] {
        entity.relationships.indices.map { .unloaded(foreignID: savedForeignID($0)) }
    }

    /// The state of relationship `index`.
    @_spi(Backend) public func relationship(_ index: Int) -> RelationshipState {
        relationshipStates?[index] ?? .unloaded(foreignID: savedForeignID(index))
    }

    /// The key relationship `index` held when last saved or loaded (nil when it has no key column).
    @_spi(Backend) public func savedForeignID(_ index: Int) -> Int64? {
        guard let slot = entity.keySlots[index] else { return nil }
        return (savedValues?[slot] ?? values[slot]).integer
    }

    /// The store now holds `foreignID` in the key column of relationship `index`.
    @_spi(Backend) public func setSavedForeignID(_ index: Int, _ foreignID: Int64?) {
        guard let slot = entity.keySlots[index], id != nil else { return }
        let key = foreignID.map(SQLiteValue.integer) ?? .null
        values[slot] = key
        savedValues?[slot] = key
    }

    // MARK: - What a backend reads and sets

    /// The context managing the object (nil before it is inserted and after its deletion is saved).
    @_spi(Backend) public var managingContext: (any ModelBackingContext)? {
        get { context }
        set { context = newValue }
    }

    /// The model object of this backing data.
    @_spi(Backend) public var model: (any PersistentModel)? {
        get { object }
        set { object = newValue }
    }

    /// Whether the object is marked for deletion at the next save.
    @_spi(Backend) public var isMarkedDeleted: Bool {
        get { isDeleted }
        set { isDeleted = newValue }
    }

    /// The value in slot `index` (attributes, then keys: the layout of the values).
    @_spi(Backend) public func storedValue(at index: Int) -> SQLiteValue { values[index] }

    /// The attributes set since the last save or load.
    @_spi(Backend) public var changedAttributeIndexes: AttributeIndexes { changedAttributes }

    /// Relationship `index` takes `state` (a backend that loaded it).
    @_spi(Backend) public func setRelationship(_ index: Int, _ state: RelationshipState) { relationships[index] = state }

    /// Gives the object its row id (a save that assigns ids), or takes it back (nil).
    @_spi(Backend) public func assignID(_ id: Int64?) { self.id = id }

    /// Replaces a value with the one the store holds for it (a store that keeps less precision).
    @_spi(Backend) public func replaceValue(_ index: Int, with value: SQLiteValue) { values[index] = value }

    /// A save wrote the object: its values and its keys now are the saved ones.
    @_spi(Backend) public func didSave() {
        for (index, _) in entity.foreignKeys {
            values[entity.keySlots[index]!] = foreignID(index).map(SQLiteValue.integer) ?? .null
        }
        savedValues = nil
        isChanged = false
        state.pointee.changedRelationships = ChangedRelationships()
        changedAttributes = AttributeIndexes()
    }

    /// Every relationship becomes unloaded, with the key saved or loaded last.
    @_spi(Backend) public func unloadRelationships() {
        relationshipStates = nil
        state.pointee.changedRelationships = ChangedRelationships()
    }

    @_spi(Backend) public enum RelationshipState {
        /// Not loaded; for a foreign key on this row, the id it holds.
        case unloaded(foreignID: Int64?)
        case toOne((any PersistentModel)?)
        case toMany(ModelList)
    }

    /// The objects of a to-many relationship, in order. A long list, once asked about membership,
    /// is indexed (`OrderedObjects`) for constant-time answers and removals: keeping an inverse in
    /// sync costs the same for the first link as for the ten thousandth, and a list that is only
    /// read (most loaded ones) costs no more than its array.
    @_spi(Backend) public struct ModelList {
        private var members: OrderedObjects {
            didSet { typedMembers = nil }
        }
        /// The members as a generated accessor last set them (a `TypedMembers`), while the list
        /// holds exactly those: any change to the members lets go of it.
        private(set) var typedMembers: AnyObject?
        /// The members, in order.
        @_spi(Backend) public var objects: [any PersistentModel] { members.elements }
        /// How many members the list has.
        @_spi(Backend) public var count: Int { members.count }
        /// For a relationship stored in a join table: the members as last saved or loaded, and
        /// whether the members changed since (a save writes the difference of their ids). The
        /// array shares its storage with `objects` until the members change, so a list saved or
        /// loaded costs no second copy.
        @_spi(Backend) public var savedMembers: [any PersistentModel] = []
        @_spi(Backend) public var membersChanged = false
        /// Whether the list was set without its members as stored being read (a context that
        /// loads only on request): `savedMembers` is then empty, and a save removes every join row
        /// of the owner before it writes the members.
        @_spi(Backend) public var replacesStoredMembers = false
        /// Up to this many members, a search is cheaper than an index.
        private static let searchedCount = 16

        @_spi(Backend) public init(_ objects: [any PersistentModel] = []) {
            members = OrderedObjects(objects)
        }

        /// A list an app sets: each object once, where it first appears (a relationship holds an
        /// object once, as SwiftData's does and as the store keeps it: `[x, x]` is `[x]`).
        init(eachOnce objects: [any PersistentModel]) {
            if objects.count > Self.searchedCount {
                var identities = Set<ObjectIdentifier>(minimumCapacity: objects.count)
                members = OrderedObjects(objects.filter { identities.insert(ObjectIdentifier($0)).inserted }, indexed: true)
            } else if objects.indices.contains(where: { index in objects[..<index].contains { $0 === objects[index] } }) {
                var kept: [any PersistentModel] = []
                for object in objects where !kept.contains(where: { $0 === object }) { kept.append(object) }
                members = OrderedObjects(kept)
            } else {
                members = OrderedObjects(objects)
            }
        }

        /// The members of a join-table relationship as the store holds them.
        @_spi(Backend) public init(saved objects: [any PersistentModel]) {
            members = OrderedObjects(objects)
            savedMembers = objects
        }

        mutating func contains(_ object: AnyObject) -> Bool {
            if !members.isIndexed, members.count > Self.searchedCount { members.index() }
            return members.contains(object)
        }

        /// Appends `object` unless it is a member; false when it was one.
        @discardableResult
        mutating func append(_ object: any PersistentModel) -> Bool {
            guard !contains(object) else { return false }
            appendNew(object)
            return true
        }

        /// Appends `object`, which is not a member.
        mutating func appendNew(_ object: any PersistentModel) {
            members.appendNew(object)
        }

        mutating func remove(_ object: AnyObject) {
            guard contains(object) else { return }
            members.remove(object)
        }

        /// The members, in order, the slots removals vacated compacted away first.
        mutating func compactedObjects() -> [any PersistentModel] {
            if members.hasVacatedSlots { members.compact() }
            return members.elements
        }

        /// Keeps `typed`, a `TypedMembers` holding exactly the members in their order.
        mutating func keepTypedMembers(_ typed: AnyObject) { typedMembers = typed }

        /// The `TypedMembers` kept, which the list no longer keeps, when the list held the only
        /// reference to it (a copy of the list that shares it gets nil, so that no other list
        /// sees its array change).
        mutating func takeTypedMembers() -> AnyObject? {
            defer { typedMembers = nil }
            return isKnownUniquelyReferenced(&typedMembers) ? typedMembers : nil
        }

        /// The list without objects whose rows are gone, as members and as saved members: their
        /// join rows went with their rows, so linking one again is a change a save writes.
        func removing(_ excluded: Set<ObjectIdentifier>) -> ModelList {
            var list = self
            list.members.removeAll(in: excluded)
            list.savedMembers.removeAll { excluded.contains(ObjectIdentifier($0)) }
            return list
        }

        /// Whether any of `others` is a member, or a saved member.
        func containsAny(of others: Set<ObjectIdentifier>) -> Bool {
            objects.contains { others.contains(ObjectIdentifier($0)) } || savedMembers.contains { others.contains(ObjectIdentifier($0)) }
        }
    }

    /// The members of a to-many list as the array a generated accessor reads and sets (`[Book]`),
    /// kept with the list (`ModelList.typedMembers`) so that the accessor hands it out without
    /// making it anew from the list's objects.
    @usableFromInline final class TypedMembers<Target: PersistentModel> {
        @usableFromInline var objects: [Target]

        @usableFromInline init(_ objects: [Target]) { self.objects = objects }

        /// The objects, which this no longer holds: the array returned is then the only reference
        /// to its storage, and changes in place.
        @inlinable func take() -> [Target] {
            defer { objects = [] }
            return objects
        }
    }

    // MARK: - Attributes
    //
    // The generic accessors generated models call are inlinable: compiled in the model's module,
    // they are specialized for the attribute's type and the target class there, and call the
    // non-generic work below (a generic function of another module runs unspecialized: its
    // conversions and casts go through metadata and witness tables at run time).

    @inlinable
    public func attribute<Value: PersistentValue>(_ index: Int, as type: Value.Type = Value.self) -> Value {
        let stored = storedValue(index)
        guard let value = Value(sqliteValue: stored) else { valueMismatch(index, stored, Value.self) }
        return value
    }

    @inlinable
    public func setAttribute<Value: PersistentValue>(_ index: Int, _ value: Value) {
        setStoredValue(index, value.sqliteValue)
    }

    /// Sets a value without marking the object changed (transient defaults of loaded objects).
    @inlinable
    public func setInitialValue<Value: PersistentValue>(_ index: Int, _ value: Value) {
        setInitialStoredValue(index, value.sqliteValue)
    }

    /// The value of attribute `index`.
    @usableFromInline func storedValue(_ index: Int) -> SQLiteValue { values[index] }

    /// Attribute `index` holds a value its type cannot take (a store another program wrote): the
    /// getter cannot throw, so the program stops, saying which row and what to do.
    @usableFromInline func valueMismatch(_ index: Int, _ stored: SQLiteValue, _ type: Any.Type) -> Never {
        let row = "\(entity.name)#\(id.map(String.init) ?? "new")", column = entity.attributes[index].column ?? entity.attributes[index].name
        preconditionFailure("""
            \(row).\(entity.attributes[index].name) holds \(stored), which is not a \(type): a program other than ModelGen wrote it \
            into column \(column) of table \(entity.table); correct the row (or delete it) in the store
            """)
    }

    /// Attribute `index` takes `newValue`: the object is changed, the attribute too once saved.
    @usableFromInline func setStoredValue(_ index: Int, _ newValue: SQLiteValue) {
        let old = values[index]
        if id != nil {
            if savedValues == nil { savedValues = Array(UnsafeBufferPointer(start: values, count: entity.valueCount)) }
            changedAttributes.insert(index)
        }
        values[index] = newValue
        markChanged()
        if let context, context.indexesPendingValues { context.pendingValueChanged(self, attribute: index, from: old) }
    }

    @usableFromInline func setInitialStoredValue(_ index: Int, _ newValue: SQLiteValue) {
        values[index] = newValue
        savedValues?[index] = newValue
    }

    /// Relationship `index` of the object changed: the object is changed, and `revert` cannot keep
    /// that relationship loaded.
    private func markRelationshipChanged(_ index: Int) {
        state.pointee.changedRelationships.insert(index)
        markChanged()
    }

    func markChanged() {
        guard !isChanged else { return }
        isChanged = true
        context?.didChange(self)
    }

    // MARK: - Relationships

    @inlinable
    public func toOne<Target: PersistentModel>(_ index: Int, as type: Target.Type = Target.self) -> Target? {
        toOneObject(index) as? Target
    }

    @inlinable
    public func toMany<Target: PersistentModel>(_ index: Int, as type: Target.Type = Target.self) -> [Target] {
        if let kept = loadedTypedMembers(index) as? TypedMembers<Target> { return kept.objects }
        // Generated accessors name the relationship's target class, whose objects alone the list holds.
        return toManyObjects(index).map { unsafeDowncast($0, to: Target.self) }
    }

    @inlinable
    public func setToOne<Target: PersistentModel>(_ index: Int, _ newValue: Target?) {
        setToOneObject(index, newValue, target: Target.entity)
    }

    @inlinable
    public func setToMany<Target: PersistentModel>(_ index: Int, _ newValue: [Target]) {
        setToMany(index, newValue, keepingArray: false)
    }

    /// `setToMany`; with `keepingArray`, when `newValue` is the list as loaded with objects
    /// appended, `newValue` is kept with the list (`TypedMembers`) for the next change in place.
    /// Only then: an array an app sets is often a literal, and keeping it would cost an allocation
    /// per list set (a tenth of an insert's memory, where every new object sets a list).
    @inlinable
    func setToMany<Target: PersistentModel>(_ index: Int, _ newValue: [Target], keepingArray: Bool) {
        switch loadedMembersChange(index, to: newValue) {
        case let .appended(after: kept):
            appendMembers(index, newValue[kept...].map { $0 }, target: Target.entity, typed: keepingArray ? TypedMembers(newValue) : nil)
        case let .leftOut(removed):
            removeMembers(index, removed, target: Target.entity, typed: keepingArray ? TypedMembers(newValue) : nil)
        case .other:
            setToManyObjects(index, newValue.map { $0 }, target: Target.entity)
        }
    }

    /// To-many relationship `index` for a change in place, as generated accessors' `_modify`
    /// hands it on (`author.books.append(book)`, `author.books.removeAll { … }`): read as the
    /// getter does, then set as the setter does. The members as last set by a generated accessor
    /// are moved out of the list, not copied (`TypedMembers`), so an append changes the array in
    /// place: appending each of n objects in turn costs n²/2 pointer comparisons
    /// (`loadedMembersChange`) besides constant work per object, where a getter and a setter
    /// copied the whole list twice per append.
    @inlinable
    public subscript<Target: PersistentModel>(toMany index: Int) -> [Target] {
        get { toMany(index) }
        _modify {
            var members: [Target] = if let kept = takeTypedMembers(index) as? TypedMembers<Target> { kept.take() } else { toMany(index) }
            defer { setToMany(index, members, keepingArray: true) }
            yield &members
        }
    }

    /// The object to-one relationship `index` refers to, loaded if need be.
    @usableFromInline func toOneObject(_ index: Int) -> (any PersistentModel)? {
        if case let .toOne(object) = loadRelationship(index) { object } else { nil }
    }

    /// The objects of to-many relationship `index`, loaded if need be.
    @usableFromInline func toManyObjects(_ index: Int) -> [any PersistentModel] {
        if case let .toMany(list) = loadRelationship(index) { list.objects } else { [] }
    }

    /// To-one relationship `index` (to `target`'s objects) takes `newValue`; the inverses follow.
    @usableFromInline func setToOneObject(_ index: Int, _ newValue: (any PersistentModel)?, target: EntityDescription) {
        // Not loaded, in a context that loads only on request, and not among its objects: the old
        // partner is not in memory. A key held in this row names it, and no object in memory
        // refers back; for a one-to-one keyed in the partners' rows, the context lets go of
        // whichever object held this one without reading it.
        let oldInMemory = if case .unloaded = relationship(index) { loadedRelationship(index) != nil } else { true }
        let old = oldInMemory ? toOneObject(index) : nil
        guard old !== newValue || !oldInMemory else { return }
        relationships[index] = .toOne(newValue)
        markRelationshipChanged(index)
        if !oldInMemory, case .inverseColumn = entity.relationships[index].storage { context?.relationshipReplacedUnread(self, through: index) }
        if let newValue { adoptRelated(newValue, through: index) }
        guard let inverse = inverseIndex(of: index, in: target) else { return }
        old?.persistentBackingData.removeInverse(inverse, self)
        newValue?.persistentBackingData.addInverse(inverse, self)
    }

    /// To-many relationship `index` (to `target`'s objects) takes `newValue`; the inverses follow.
    @usableFromInline func setToManyObjects(_ index: Int, _ newValue: [any PersistentModel], target: EntityDescription) {
        var list = ModelList(eachOnce: newValue)
        var old: [any PersistentModel] = []
        // Not loaded, in a context that loads only on request: the old members are not known.
        // The context lets go of them without reading them, as it does of a one-to-one's old
        // partner (where their keys name this object), and a save replaces the join rows (where a
        // join table holds the links).
        let loaded = loadedRelationship(index)
        if case let .toMany(previous) = loaded {
            old = previous.objects
            list.savedMembers = previous.savedMembers
            list.replacesStoredMembers = previous.replacesStoredMembers
        } else if loaded == nil, case .joinTable = entity.relationships[index].storage {
            list.replacesStoredMembers = true
        }
        let removed = old.filter { !list.contains($0) }
        noteMembershipChange(index, in: &list)
        relationships[index] = .toMany(list)
        if loaded == nil { context?.relationshipReplacedUnread(self, through: index) }
        for object in list.objects { adoptRelated(object, through: index) }
        guard let inverse = inverseIndex(of: index, in: target) else { return }
        let oldIdentities = Set(old.lazy.map { ObjectIdentifier($0) })
        for object in removed {
            object.persistentBackingData.removeInverse(inverse, self)
        }
        for added in list.objects where !oldIdentities.contains(ObjectIdentifier(added)) {
            added.persistentBackingData.addInverse(inverse, self)
        }
    }

    /// How a list a setter gets differs from loaded to-many relationship `index`, when an append
    /// or a removal gives it: its members in their order and more objects after them
    /// (`department.staff.append(employee)`), or its members in their order with some left out
    /// (`remove(at:)`, `removeAll { … }`). `.other` for any other list, or one not loaded. One
    /// walk comparing pointers; no copy of the members is kept once this returns, so the list
    /// changes in place after.
    @inlinable
    func loadedMembersChange<Target: PersistentModel>(_ index: Int, to newValue: [Target]) -> LoadedMembersChange {
        guard let members = loadedMembers(index) else { return .other }
        if newValue.count > members.count {
            for position in members.indices where members[position] !== newValue[position] { return .other }
            return .appended(after: members.count)
        }
        guard newValue.count < members.count else { return .other }
        var leftOut: [any PersistentModel] = []
        var next = 0
        for member in members {
            if next < newValue.count, member === newValue[next] { next += 1 } else { leftOut.append(member) }
        }
        return next == newValue.count ? .leftOut(leftOut) : .other
    }

    /// What `loadedMembersChange` finds.
    @usableFromInline enum LoadedMembersChange {
        /// The members, then objects after them from this position on.
        case appended(after: Int)
        /// The members but these, the others in their order.
        case leftOut([any PersistentModel])
        case other
    }

    /// The members of to-many relationship `index`, in order, when it is loaded (nil otherwise):
    /// the list's own array, compacted first if removals left vacated slots in it.
    @usableFromInline func loadedMembers(_ index: Int) -> [any PersistentModel]? {
        guard case .toMany = relationship(index), var list = takeList(index) else { return nil }
        defer { relationships[index] = .toMany(list) }
        return list.compactedObjects()
    }

    /// The members of to-many relationship `index` as a generated accessor last set them
    /// (`TypedMembers`), if the list still holds exactly those; loaded if need be.
    @usableFromInline func loadedTypedMembers(_ index: Int) -> AnyObject? {
        if case let .toMany(list) = loadRelationship(index) { list.typedMembers } else { nil }
    }

    /// `loadedTypedMembers(index)`, taken out of the list, when nothing else refers to it: the
    /// caller may take its array (`TypedMembers.take()`), which then changes in place.
    @usableFromInline func takeTypedMembers(_ index: Int) -> AnyObject? {
        guard case .toMany = loadRelationship(index), var list = takeList(index) else { return nil }
        defer { relationships[index] = .toMany(list) }
        return list.takeTypedMembers()
    }

    /// Appends `objects` to loaded to-many relationship `index` (to `target`'s objects), each that
    /// is not a member yet, once; the inverses of those follow. As setting the whole list would,
    /// but only the new members are looked at, where setting the list made and searched a set of
    /// every member, and linked each, every time. `typed`, the members after the append as a
    /// generated accessor holds them, is kept with the list when each of `objects` was added
    /// (none was a member, none came twice).
    @usableFromInline func appendMembers(_ index: Int, _ objects: [any PersistentModel], target: EntityDescription, typed: AnyObject? = nil) {
        guard var list = takeList(index) else { return }
        var added: [any PersistentModel] = []
        for object in objects where list.append(object) { added.append(object) }
        if added.count == objects.count, let typed { list.keepTypedMembers(typed) }
        noteMembershipChange(index, in: &list)
        relationships[index] = .toMany(list)
        for object in added { adoptRelated(object, through: index) }
        guard let inverse = inverseIndex(of: index, in: target) else { return }
        for object in added { object.persistentBackingData.addInverse(inverse, self) }
    }

    /// Removes `objects`, members of loaded to-many relationship `index` (to `target`'s objects);
    /// their inverses follow. As setting the list without them would, but only they are looked at.
    /// `typed`, the members after the removal as a generated accessor holds them, is kept with the list.
    @usableFromInline func removeMembers(_ index: Int, _ objects: [any PersistentModel], target: EntityDescription, typed: AnyObject? = nil) {
        guard var list = takeList(index) else { return }
        for object in objects { list.remove(object) }
        if let typed { list.keepTypedMembers(typed) }
        noteMembershipChange(index, in: &list)
        relationships[index] = .toMany(list)
        guard let inverse = inverseIndex(of: index, in: target) else { return }
        for object in objects { object.persistentBackingData.removeInverse(inverse, self) }
    }

    /// Two objects became related through relationship `index`: when one is in a context and the
    /// other is new and in none, the new one (with the new objects it refers to) is inserted into
    /// that context, as SwiftData does. Objects of two contexts stop the program, as in SwiftData:
    /// neither context could save the link right (a key the other has not assigned yet, an object
    /// the other context registered).
    private func adoptRelated(_ other: any PersistentModel, through index: Int) {
        let otherBacking = other.persistentBackingData
        // Both in one context, or both in none (objects an app links before inserting them): no
        // conflict, and nothing to insert.
        guard contextReference !== otherBacking.contextReference else { return }
        func conflict(_ one: ModelBackingData, _ another: ModelBackingData) -> Bool {
            guard let reference = one.contextReference, reference.context != nil else { return false }
            return another.isClaimed(byOtherThan: reference)
        }
        if conflict(self, otherBacking) || conflict(otherBacking, self) {
            preconditionFailure("""
                \(entity.name).\(entity.relationships[index].name) relates objects of two contexts (\(label) and \(otherBacking.label)): \
                relate objects of one context (find the other in it with model(for: persistentModelID), after its context saved it)
                """)
        }
        if let context, otherBacking.context == nil, otherBacking.id == nil {
            context.insertGraph(other)
        } else if let context = otherBacking.context, self.context == nil, id == nil, let object {
            context.insertGraph(object)
        }
    }

    /// Whether the object belongs to a context other than the one `reference` names, one that
    /// still claims it: a context that is alive, or, for a saved object, any (the object of its row
    /// is that context's, even once the context is gone). A new object whose context is gone (an
    /// insert never saved) belongs to none.
    private func isClaimed(byOtherThan reference: ContextReference) -> Bool {
        guard let contextReference, contextReference !== reference else { return false }
        return contextReference.context != nil || id != nil
    }

    /// The object as messages name it: `Employee#1`, `Employee#new`.
    private var label: String { "\(entity.name)#\(id.map(String.init) ?? "new")" }

    /// Whether the object may join `newContext` as a new object (an insert, or the graph of one):
    /// it is new, and in no context, in that one, or in one that is gone. An object another context
    /// claims stops the program, as relating objects of two contexts does (the other context would
    /// save it too, or holds its row's object).
    @_spi(Backend) public func mayJoin(_ newContext: any ModelBackingContext) -> Bool {
        if isClaimed(byOtherThan: newContext.objectReference) {
            preconditionFailure("\(label) is an object of another context: insert it into one context only (the new objects it is related to go with it)")
        }
        return id == nil
    }

    /// What inserting an object the app already has means, besides inserting a new one: an
    /// object `context` marked deleted stays after all (true: the context takes it out of its
    /// deletions, and its unsaved changes stay); one whose row a saved deletion removed (a row id,
    /// and no context) becomes a new object with the values and relationships it shows, for the
    /// insert to write as a new row (an undo after the save; false, as for any new object).
    @_spi(Backend) public func insertAgain(into context: any ModelBackingContext) -> Bool {
        if contextReference === context.objectReference, isDeleted {
            isDeleted = false
            return true
        }
        if contextReference == nil, id != nil { becomeNew() }
        return false
    }

    /// The object's row is gone: it becomes a new object (no id, nothing saved), keeping its
    /// values and the relationships it shows; the objects it refers to, which forgot it when its
    /// deletion was saved, refer to it again once it is inserted (`reattachToRelated`).
    private func becomeNew() {
        id = nil
        savedValues = nil
        changedAttributes = AttributeIndexes()
        isChanged = false
        if var states = relationshipStates {
            for index in states.indices {
                guard case var .toMany(list) = states[index], case .joinTable = entity.relationships[index].storage else { continue }
                list.savedMembers = []
                list.membersChanged = list.count > 0
                states[index] = .toMany(list)
            }
            relationshipStates = states
        }
        state.pointee.isDetached = true
    }

    /// Whether `deleting` may mark the object deleted: it is a saved object of that context, not
    /// marked yet (an object in no context has no row to delete, or has lost it). An object another
    /// context claims stops the program: the delete would be lost without a word.
    @_spi(Backend) public func mayBeDeleted(by deleting: any ModelBackingContext) -> Bool {
        if isClaimed(byOtherThan: deleting.objectReference) {
            preconditionFailure("""
                \(label) is an object of another context: delete it through its own context, \
                or find it in this one with model(for: persistentModelID)
                """)
        }
        return contextReference === deleting.objectReference && !isDeleted
    }

    private func inverseIndex(of index: Int, in target: EntityDescription) -> Int? {
        entity.relationships[index].inverse.flatMap(target.relationshipIndex(named:))
    }

    private func noteMembershipChange(_ index: Int, in list: inout ModelList) {
        if case .joinTable = entity.relationships[index].storage { list.membersChanged = true }
        markRelationshipChanged(index)
    }

    /// Calls `body` with each object a loaded relationship refers to (what an insert takes along).
    @_spi(Backend) public func forEachLoadedRelatedObject(_ body: (any PersistentModel) -> Void) {
        guard let relationshipStates else { return }
        for state in relationshipStates {
            switch state {
            case let .toOne(object?): body(object)
            case let .toMany(list): list.objects.forEach(body)
            default: break
            }
        }
    }

    /// The object goes before it was ever saved: the objects it is related to forget it, as
    /// they would had it been saved and deleted.
    @_spi(Backend) public func detachFromRelated() {
        state.pointee.isDetached = true
        forEachRelatedObject { object, inverse in object.persistentBackingData.removeInverse(inverse, self) }
    }

    /// The objects never saved that its loaded relationships with the `cascade` rule refer to:
    /// what deleting this object, never saved either, discards with it (a saved one stays: its row
    /// never referred to this object).
    @_spi(Backend) public var unsavedCascadeTargets: [any PersistentModel] {
        guard let relationshipStates else { return [] }
        var targets: [any PersistentModel] = []
        for (index, state) in relationshipStates.enumerated() where entity.relationships[index].deleteRule == "cascade" {
            switch state {
            case let .toOne(object?): targets.append(object)
            case let .toMany(list): targets += list.objects
            default: break
            }
        }
        return targets.filter { $0.persistentBackingData.id == nil }
    }

    /// An object deleted before it was ever saved is inserted again: the objects it refers to
    /// refer to it again, as before its deletion (nothing to do for any other object).
    @_spi(Backend) public func reattachToRelated() {
        guard state.pointee.isDetached else { return }
        state.pointee.isDetached = false
        forEachRelatedObject { object, inverse in object.persistentBackingData.addInverse(inverse, self) }
    }

    /// Calls `body` with each object a loaded relationship refers to, and the index of the
    /// relationship's inverse in that object's entity (relationships without one are skipped).
    private func forEachRelatedObject(_ body: (any PersistentModel, Int) -> Void) {
        guard let relationshipStates else { return }
        for (index, state) in relationshipStates.enumerated() {
            let related: [any PersistentModel]
            switch state {
            case let .toOne(object?): related = [object]
            case let .toMany(list): related = list.objects
            default: related = []
            }
            for object in related {
                guard let inverse = inverseIndex(of: index, in: type(of: object).entity) else { break }
                body(object, inverse)
            }
        }
    }

    /// The other side changed: `owner` no longer refers to this object through the inverse.
    private func removeInverse(_ index: Int, _ owner: ModelBackingData) {
        if loadedRelationship(index) == nil {
            // Not in memory (a context that loads only on request): a key in this row that names
            // the owner goes; a list or a key elsewhere is the store's, which the save brings in step.
            if case let .unloaded(foreignID?) = relationship(index), foreignID == owner.id, case .column = entity.relationships[index].storage {
                relationships[index] = .toOne(nil)
                markRelationshipChanged(index)
            }
            return
        }
        if case let .toOne(object) = relationships[index], object?.persistentBackingData === owner {
            relationships[index] = .toOne(nil)
            markRelationshipChanged(index)
        } else if let ownerObject = owner.object, var list = takeList(index) {
            defer { relationships[index] = .toMany(list) }
            guard list.contains(ownerObject) else { return }
            list.remove(ownerObject)
            noteMembershipChange(index, in: &list)
        }
    }

    /// Many-to-many relationship `index` no longer holds `owner`, whose side was replaced without
    /// being read (`relationshipReplacedUnread`): a loaded list that holds it lets go of it; one
    /// not loaded is the store's, which the save brings in step.
    @_spi(Backend) public func letGoOfOwner(_ owner: ModelBackingData, through index: Int) {
        removeInverse(index, owner)
    }

    /// To-one relationship `index`, whose key is in this row, no longer refers to the object it
    /// named, which another object took as its one-to-one partner (`relationshipReplacedUnread`).
    @_spi(Backend) public func letGoOfTakenPartner(_ index: Int) {
        relationships[index] = .toOne(nil)
        markRelationshipChanged(index)
    }

    /// Takes a loaded to-many list out of `relationships`, so that the caller holds its only
    /// reference and changes it in place (a copy per link would make linking quadratic); the
    /// caller puts it back.
    private func takeList(_ index: Int) -> ModelList? {
        guard case let .toMany(list) = relationships[index] else { return nil }
        relationships[index] = .unloaded(foreignID: nil)
        return list
    }

    /// The other side changed: `owner` now refers to this object through the inverse.
    private func addInverse(_ index: Int, _ owner: ModelBackingData) {
        guard let ownerObject = owner.object else { return }
        if loadedRelationship(index) == nil {
            // Not in memory (a context that loads only on request): a to-one takes the owner (its
            // old partner, when the key is in this row, is not in memory either and has nothing
            // to update; when the key is in the partners' rows, the context lets go of whichever
            // object held this one); a list is the store's.
            if !entity.relationships[index].isToMany {
                relationships[index] = .toOne(ownerObject)
                markRelationshipChanged(index)
                if case .inverseColumn = entity.relationships[index].storage { context?.relationshipReplacedUnread(self, through: index) }
            } else if case .joinTable = entity.relationships[index].storage {
                context?.listNotLoadedGained(owner, self, through: index)
            }
            return
        }
        if var list = takeList(index) {
            defer { relationships[index] = .toMany(list) }
            // An owner never saved cannot be a member yet (no list loaded from the store holds it,
            // and lists in memory follow their inverses), so it is appended without a search: a
            // list that thousands of new objects join builds no set of its members.
            if owner.id == nil {
                list.appendNew(ownerObject)
                noteMembershipChange(index, in: &list)
            } else if list.append(ownerObject) {
                noteMembershipChange(index, in: &list)
            }
            return
        }
        switch relationships[index] {
        case let .toOne(previous):
            guard previous?.persistentBackingData !== owner else { return }
            relationships[index] = .toOne(ownerObject)
            markRelationshipChanged(index)
            // The previous partner no longer refers to this object (through a to-one, or as a
            // member of its to-many: moving to another department leaves the old one's staff).
            if let previous, let backIndex = inverseIndex(of: index, in: type(of: previous).entity) {
                previous.persistentBackingData.removeInverse(backIndex, self)
            }
        case .toMany, .unloaded:
            break
        }
    }

    /// The model is going away (generated models call this from their `deinit`; the backing data's
    /// own deinit calls it too): its row's entry leaves the context's identity map, and nothing
    /// refers to the model any longer.
    public func modelDidEnd() {
        if let id, let context { context.forget(self, id: id) }
        context = nil
        object = nil
    }

    /// A relationship the app reads or replaces, loaded on first access through the context (an
    /// object in no context has nothing to load: its row, if it had one, is gone; an object whose
    /// context was freed while the app kept it stops the program here, since it cannot). A context that
    /// loads only on request (PostgreSQL's) stops the program here when the relationship is
    /// neither loaded nor in memory: an unloaded relationship never reads as empty.
    private func loadRelationship(_ index: Int) -> RelationshipState {
        guard let state = loadedRelationship(index) else { context!.relationshipNotLoaded(index, of: self) }
        return state
    }

    /// The relationship's state, loaded if the context can (from the store, or from its objects in
    /// memory); nil when its context loads only on request and does not have it.
    private func loadedRelationship(_ index: Int) -> RelationshipState? {
        if case let .unloaded(foreignID) = relationship(index) {
            guard let context else {
                // A context that went while the app kept its objects cannot load for them, and an
                // empty answer would be a wrong one (SQLAlchemy's DetachedInstanceError, Hibernate's
                // LazyInitializationException): stop and say what to do.
                if contextReference != nil, let id {
                    preconditionFailure("""
                        \(entity.name).\(entity.relationships[index].name) of \(entity.name)#\(id) was not loaded, and the context \
                        that loaded the object is gone: keep the ModelContext alive while its objects are used, or load the \
                        relationship first (FetchDescriptor.relationshipKeyPathsForPrefetching)
                        """)
                }
                relationships[index] = entity.relationships[index].isToMany ? .toMany(ModelList()) : .toOne(nil)
                return relationships[index]
            }
            guard let state = context.load(index, of: self, foreignID: foreignID) else { return nil }
            relationships[index] = state
        }
        return relationships[index]
    }

    /// Calls `body` with each join-table relationship whose members changed since the last save:
    /// its index, and how many members it has now and had when saved (at least as many ids as
    /// `memberIDs` gives; no ids are made).
    @_spi(Backend) public func forEachChangedMembers(_ body: (_ index: Int, _ currentCount: Int, _ savedCount: Int) throws -> Void) rethrows {
        guard let relationshipStates else { return }
        for index in relationshipStates.indices {
            guard case let .toMany(list) = relationshipStates[index], list.membersChanged else { continue }
            try body(index, list.count, list.savedMembers.count)
        }
    }

    /// The ids of the members of join-table relationship `index` now and as last saved.
    @_spi(Backend) public func memberIDs(_ index: Int) -> (current: MemberIDs, saved: MemberIDs) {
        guard case let .toMany(list) = relationship(index) else { return (MemberIDs(), MemberIDs()) }
        return (MemberIDs(list.objects), MemberIDs(list.savedMembers))
    }

    /// The ids of the members of relationship `index` marked deleted (saved objects an unsaved
    /// deletion will remove).
    func deletedMemberIDs(_ index: Int) -> Set<Int64> {
        guard case let .toMany(list) = relationship(index) else { return [] }
        return Set(list.objects.lazy.map(\.persistentBackingData).filter(\.isDeleted).compactMap(\.id))
    }

    /// Whether the members of join-table relationship `index` replace those stored, which were
    /// never read (`ModelList.replacesStoredMembers`).
    @_spi(Backend) public func replacesStoredMembers(_ index: Int) -> Bool {
        if case let .toMany(list) = relationship(index) { list.replacesStoredMembers } else { false }
    }

    /// A save wrote the members of join-table relationship `index`: they are now the saved ones.
    @_spi(Backend) public func didSaveMembers(_ index: Int) {
        guard var list = takeList(index) else { return }
        list.savedMembers = list.objects
        list.membersChanged = false
        list.replacesStoredMembers = false
        relationships[index] = .toMany(list)
    }

    /// Whether a save writes the key of relationship `index` (stored in this row): it differs from
    /// the stored one; on an object to delete too (its deletion then follows the relationships it
    /// has now, as SwiftData's delete rules do), unless it is a required key emptied, which its row
    /// cannot be without until it goes.
    @_spi(Backend) public func writesKey(_ index: Int) -> Bool {
        let key = foreignID(index)
        return key != savedForeignID(index) && !(isDeleted && key == nil && !entity.relationships[index].isOptional)
    }

    /// The id a to-one stored in a column of this row refers to now.
    @_spi(Backend) public func foreignID(_ index: Int) -> Int64? {
        switch relationship(index) {
        case let .unloaded(foreignID): return foreignID
        case let .toOne(object): return object?.persistentBackingData.id
        case .toMany: return nil
        }
    }

    /// Drops references to objects whose rows a delete removed (`detached`); relationships not loaded
    /// take the foreign keys the store now holds, when given (the caller made them the saved ones).
    /// A loaded to-one whose key is on this row and that the app has not changed keeps showing
    /// what it showed (nil for an object removed here), and its saved key becomes that, so that a
    /// save writes no key the app never set: neither a nil over the store's key nor the key it
    /// read over one another context saved since.
    @_spi(Backend) public func forgetRelated(_ detached: Set<ObjectIdentifier>, storedForeignIDs: [Int64?]?) {
        guard !detached.isEmpty || storedForeignIDs != nil, relationshipStates != nil else { return }
        for index in relationships.indices {
            switch relationships[index] {
            case .unloaded:
                if let storedForeignIDs { relationships[index] = .unloaded(foreignID: storedForeignIDs[index]) }
            case let .toOne(object):
                let kept = object.flatMap { detached.contains(ObjectIdentifier($0)) ? nil : $0 }
                if kept == nil, object != nil { relationships[index] = .toOne(nil) }
                if storedForeignIDs != nil, !state.pointee.changedRelationships.contains(index) {
                    setSavedForeignID(index, kept?.persistentBackingData.id)
                }
            case let .toMany(list) where list.containsAny(of: detached):
                relationships[index] = .toMany(list.removing(detached))
            default:
                break
            }
        }
    }

    /// Forgets unsaved changes and loaded relationships (they load again on access). With
    /// `keepingUnchangedRelationships`, only the relationships that changed are unloaded (for a
    /// context that loads only on request, whose objects keep what it loaded: an attribute changed
    /// and rolled back leaves the object's relationships readable); the caller knows the others
    /// hold no unsaved change of their other side.
    @_spi(Backend) public func revert(keepingUnchangedRelationships: Bool = false) {
        if let savedValues {
            savedValues.withUnsafeBufferPointer { values.update(from: $0.baseAddress!, count: $0.count) }
            self.savedValues = nil
        }
        if !keepingUnchangedRelationships {
            unloadRelationships()
        } else if !state.pointee.changedRelationships.isEmpty, var states = relationshipStates {
            // A key column takes its saved id again (restored with the values above).
            for index in states.indices where state.pointee.changedRelationships.contains(index) {
                states[index] = .unloaded(foreignID: savedForeignID(index))
            }
            relationshipStates = states
        }
        state.pointee.changedRelationships = ChangedRelationships()
        changedAttributes = AttributeIndexes()
        isChanged = false
        isDeleted = false
    }

    /// Registers the model object; generated initializers call it.
    public func attach(_ object: any PersistentModel) {
        self.object = object
    }
}

/// The relationships of an object that changed, in 32 bits (the padding after the flags of an
/// object's state, so an object costs no more memory for them): a bit for each of the first 31,
/// and one shared by all further ones (asking about one of those is answered for all of them).
struct ChangedRelationships {
    private var bits: UInt32 = 0

    var isEmpty: Bool { bits == 0 }

    func contains(_ index: Int) -> Bool { bits & Self.bit(index) != 0 }

    mutating func insert(_ index: Int) { bits |= Self.bit(index) }

    private static func bit(_ index: Int) -> UInt32 { 1 << UInt32(min(index, 31)) }
}

/// The initializers of `ModelBackingData`: a class whose instances `ManagedBuffer.create` makes
/// has no initializers of its own, so these, in a protocol extension, make one and take it as
/// `self` (generated models call `ModelBackingData(entity:)`).
public protocol ModelBackingDataInitializers {}

extension ModelBackingDataInitializers where Self == ModelBackingData {
    /// A new object: default values, every relationship loaded and empty.
    public init(entity: EntityDescription) {
        self = ModelBackingData.make(entity: entity, state: {
            ModelBackingData.State(entity: entity, relationshipStates: entity.relationships.map { $0.isToMany ? .toMany(.init()) : .toOne(nil) })
        }, value: { _ in .null })
    }

    /// An object loaded from a row, in the context `contextReference` names: `value(slot)` gives
    /// each of its values (attributes, then keys).
    @_spi(Backend) public init(entity: EntityDescription, id: Int64, contextReference: ContextReference, value: (_ slot: Int) -> SQLiteValue) {
        self = ModelBackingData.make(entity: entity, state: {
            ModelBackingData.State(entity: entity, id: id, contextReference: contextReference)
        }, value: value)
    }
}

/// The row ids of a to-many relationship's members, sorted and each once: the form in which a
/// save compares the members now with the members saved (a merge, no hashing).
@_spi(Backend) public struct MemberIDs: Equatable {
    @_spi(Backend) public private(set) var ids: [Int64] = []

    @_spi(Backend) public init() {}

    @_spi(Backend) public init(_ objects: [any PersistentModel]) {
        // One array, sorted and made unique in place (a save makes one per changed list).
        ids.reserveCapacity(objects.count)
        for object in objects {
            if let id = object.persistentBackingData.id { ids.append(id) }
        }
        ids.sortKeepingEachOnce()
    }

    /// Calls `body` with each id here and not in `other`, in order (both are sorted: one merge).
    @_spi(Backend) public func forEach(notIn other: MemberIDs, _ body: (Int64) throws -> Void) rethrows {
        var position = other.ids.startIndex
        for id in ids {
            while position < other.ids.endIndex, other.ids[position] < id { position += 1 }
            if position == other.ids.endIndex || other.ids[position] != id { try body(id) }
        }
    }

    /// How many ids are here and not in `other`.
    @_spi(Backend) public func count(notIn other: MemberIDs) -> Int {
        guard !other.ids.isEmpty else { return ids.count }
        var count = 0
        forEach(notIn: other) { _ in count += 1 }
        return count
    }
}
