/// The binary half of `PropertyListBounds`: validates a `bplist00` file's trailer and offset
/// table, then walks the object graph from the top object with an explicit stack.
///
/// Layout: `bplist00`, the objects, an offset table (one big-endian offset per object), and a
/// 32-byte trailer (offset size, reference size, object count, top object, table offset).
/// Arrays, sets and ordered sets (`0xA_`, `0xC_`, `0xB_`) hold one reference per element,
/// dictionaries (`0xD_`) two (keys, then values); a count of 15 is followed by an integer
/// object holding the real count.
///
/// Each object is visited once (a depth-first walk that remembers finished objects), so the
/// work is linear in the references even when many containers share one child, and a
/// reference back to an object still on the stack is a cycle. Depth and the number of values
/// are computed for the tree the references stand for, which is what a decoder walks:
/// sharing does not make an expensive document cheap to check and expensive to decode.
enum BinaryPropertyListBounds {
    static let headerLength = 8
    static let trailerLength = 32

    /// A container on the walk's stack.
    struct Frame {
        var object: Int
        var references: Int
        var referenceCount: Int
        var next = 0
        var deepestChild = 0
        var values = 1
    }

    static func check(_ b: UnsafeBufferPointer<UInt8>, limits: PropertyListLimits) throws(PropertyListBoundsError) {
        guard b.starts(with: PropertyListBounds.binaryMagic) else {
            throw .malformedBinary("only version 00 (bplist00) is read")
        }
        guard b.count >= headerLength + 1 + trailerLength else { throw .malformedBinary("it is shorter than a header, one object and a trailer") }
        let trailer = b.count - trailerLength
        let offsetSize = Int(b[trailer + 6])
        let referenceSize = Int(b[trailer + 7])
        guard (1 ... 8).contains(offsetSize), (1 ... 8).contains(referenceSize) else {
            throw .malformedBinary("the trailer gives offsets of \(offsetSize) bytes and references of \(referenceSize) bytes (1 to 8 are read)")
        }
        let declaredCount = integer(b, at: trailer + 8, size: 8)
        let top = integer(b, at: trailer + 16, size: 8)
        let table = integer(b, at: trailer + 24, size: 8)
        guard declaredCount >= 1 else { throw .malformedBinary("the trailer declares no objects") }
        guard declaredCount <= UInt64(limits.maximumObjects) else {
            throw .tooManyObjects(count: Int(clamping: declaredCount), limit: limits.maximumObjects)
        }
        let count = Int(declaredCount)
        guard top < declaredCount else { throw .malformedBinary("the top object \(top) is not one of the \(count) objects") }
        guard table >= UInt64(headerLength + 1), table <= UInt64(trailer), (trailer - Int(table)) / offsetSize >= count else {
            throw .malformedBinary("the offset table (at byte \(table), \(count) offsets of \(offsetSize) bytes) does not fit between the objects and the trailer")
        }
        let objectsEnd = Int(table)
        var offsets = [Int](repeating: 0, count: count)
        for object in 0 ..< count {
            let offset = integer(b, at: objectsEnd + object * offsetSize, size: offsetSize)
            guard offset >= UInt64(headerLength), offset < UInt64(objectsEnd) else {
                throw .malformedBinary("object \(object) starts at byte \(offset), outside the objects (bytes \(headerLength)..<\(objectsEnd))")
            }
            offsets[object] = Int(offset)
        }
        let walk = Walk(b: b, offsets: offsets, objectsEnd: objectsEnd, referenceSize: referenceSize, limits: limits)
        try walk.run(from: Int(top))
    }

    /// A big-endian unsigned integer of `size` (1...8) bytes at `offset`.
    static func integer(_ b: UnsafeBufferPointer<UInt8>, at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for k in 0 ..< size { value = value << 8 | UInt64(b[offset + k]) }
        return value
    }

    struct Walk {
        let b: UnsafeBufferPointer<UInt8>
        let offsets: [Int]
        let objectsEnd: Int
        let referenceSize: Int
        let limits: PropertyListLimits

        /// Walks the graph from `top`. Per object: 0 not seen, 1 on the stack, 2 finished,
        /// with its height (containers on the longest path down, itself included) and the
        /// number of values it stands for (capped just above the limit).
        func run(from top: Int) throws(PropertyListBoundsError) {
            var state = [UInt8](repeating: 0, count: offsets.count)
            var height = [Int](repeating: 0, count: offsets.count)
            var values = [Int](repeating: 0, count: offsets.count)
            let cap = limits.maximumObjects + 1
            var stack: [Frame] = []
            guard let topFrame = try container(top) else { return }
            stack.append(topFrame)
            state[top] = 1
            while let last = stack.indices.last {
                if stack[last].next < stack[last].referenceCount {
                    let child = try reference(of: stack[last])
                    stack[last].next += 1
                    switch state[child] {
                    case 1:
                        throw .referenceCycle(object: child)
                    case 2:
                        try add(height: height[child], values: values[child], to: &stack, cap: cap)
                    default:
                        if let frame = try container(child) {
                            guard stack.count < limits.maximumDepth else { throw .tooDeep(limit: limits.maximumDepth) }
                            state[child] = 1
                            stack.append(frame)
                        } else {
                            state[child] = 2
                            values[child] = 1
                            try add(height: 0, values: 1, to: &stack, cap: cap)
                        }
                    }
                } else {
                    let done = stack.removeLast()
                    state[done.object] = 2
                    height[done.object] = done.deepestChild + 1
                    values[done.object] = done.values
                    if !stack.isEmpty { try add(height: done.deepestChild + 1, values: done.values, to: &stack, cap: cap) }
                }
            }
        }

        /// Adds a finished child to the container on top of the stack.
        func add(height: Int, values: Int, to stack: inout [Frame], cap: Int) throws(PropertyListBoundsError) {
            guard stack.count + height <= limits.maximumDepth else { throw .tooDeep(limit: limits.maximumDepth) }
            let last = stack.count - 1
            stack[last].deepestChild = max(stack[last].deepestChild, height)
            stack[last].values = min(stack[last].values + values, cap)
            guard stack[last].values <= limits.maximumObjects else { throw .tooManyValues(limit: limits.maximumObjects) }
        }

        /// The object the frame's next reference names, checked to exist.
        func reference(of frame: Frame) throws(PropertyListBoundsError) -> Int {
            let raw = BinaryPropertyListBounds.integer(b, at: frame.references + frame.next * referenceSize, size: referenceSize)
            guard raw < UInt64(offsets.count) else {
                throw .referenceOutOfRange(object: frame.object, reference: raw, objectCount: offsets.count)
            }
            return Int(raw)
        }

        /// The count a marker at `offset` declares (its low nibble, or with 15 the integer
        /// object after it) and where the object's contents start.
        func count(of object: Int, marker: UInt8, at offset: Int) throws(PropertyListBoundsError) -> (UInt64, start: Int) {
            let start = offset + 1
            guard marker & 0x0F == 0x0F else { return (UInt64(marker & 0x0F), start) }
            guard start < objectsEnd, b[start] >> 4 == 0x1, b[start] & 0x0F <= 3 else {
                throw .malformedBinary("the length of object \(object) is not an integer of 1 to 8 bytes")
            }
            let size = 1 << Int(b[start] & 0x0F)
            guard start + 1 + size <= objectsEnd else { throw .malformedBinary("the length of object \(object) runs past the objects") }
            return (BinaryPropertyListBounds.integer(b, at: start + 1, size: size), start + 1 + size)
        }

        /// Checks that a leaf object (a number, date, data, string or UID) lies inside the
        /// objects: Foundation's decoder reads a leaf's bytes as its marker declares them and
        /// traps when they run past the buffer (a UTF-16 string declaring 109 characters in
        /// the last 20 bytes did, found by the fuzzer).
        func checkLeaf(_ object: Int, marker: UInt8, at offset: Int) throws(PropertyListBoundsError) {
            let low = Int(marker & 0x0F)
            var start = offset + 1
            let size: UInt64
            switch marker >> 4 {
            case 0x0: size = 0
            case 0x1, 0x2:
                guard low <= 4 else { throw .malformedBinary("number object \(object) declares \(1 << low) bytes (1 to 16 are read)") }
                size = UInt64(1 << low)
            case 0x3: size = 8
            case 0x8: size = UInt64(low + 1)
            case 0x4, 0x5, 0x6:
                let length: UInt64
                (length, start) = try count(of: object, marker: marker, at: offset)
                let (bytes, overflow) = length.multipliedReportingOverflow(by: marker >> 4 == 0x6 ? 2 : 1)
                guard !overflow else { throw .malformedBinary("object \(object) declares \(length) characters, more than fit before the offset table") }
                size = bytes
            default:
                // A type this walk does not know is left to the decoder, which refuses it.
                return
            }
            guard size <= UInt64(objectsEnd - start) else {
                throw .malformedBinary("object \(object) declares \(size) bytes, more than fit before the offset table")
            }
        }

        /// The frame for `object` when it is a container, `nil` for any other object. Checks
        /// that its references lie inside the objects.
        func container(_ object: Int) throws(PropertyListBoundsError) -> Frame? {
            let offset = offsets[object]
            let marker = b[offset]
            let perEntry: Int
            switch marker >> 4 {
            case 0xA, 0xB, 0xC: perEntry = 1
            case 0xD: perEntry = 2
            default:
                try checkLeaf(object, marker: marker, at: offset)
                return nil
            }
            let (entries, start) = try count(of: object, marker: marker, at: offset)
            guard entries <= UInt64((objectsEnd - start) / (referenceSize * perEntry)) else {
                throw .malformedBinary("object \(object) declares \(entries) entries, more than fit before the offset table")
            }
            return Frame(object: object, references: start, referenceCount: Int(entries) * perEntry)
        }
    }
}
