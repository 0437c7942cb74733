/// A small seeded random number generator (SplitMix64), so randomized tests replay exactly from their seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// Creates a generator from `seed`.
    init(seed: UInt64) {
        state = seed
    }

    /// Returns the next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly chosen element (the collection must not be empty).
    mutating func pick<C: Collection>(_ collection: C) -> C.Element {
        let offset = Int(next() % UInt64(collection.count))
        return collection[collection.index(collection.startIndex, offsetBy: offset)]
    }

    /// An integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// `true` with a probability of `percent` in 100.
    mutating func chance(_ percent: Int) -> Bool {
        Int(next() % 100) < percent
    }
}
