import Synchronization

/// A lookup's proof that nothing at all was stored for its URL and partition: the cache's count of insertions when it
/// looked (``CacheStorage/insertions``). Every response that is stored, whatever the URL, adds one to that count, so
/// while it is unchanged a lookup of the same URL and partition finds nothing either, and misses (or is
/// `unsatisfiable`), whatever its request's fields, policy or date.
///
/// The client keeps the proof of the lookup that made a flight on the flight (``FlightTable/Flight/note``): a caller
/// that would send the same plain request joins that flight without a lookup of its own while the proof holds
/// (`APIClient+Joining.swift`). Only a cache without a disk tier proves anything: a miss in memory says nothing about
/// the directory.
struct NothingStored: Equatable, Sendable {
    /// The count of insertions plus one; `0` when nothing was proven.
    let note: UInt64

    /// Nothing was proven: the lookup found something, did not look, or the cache has a disk tier.
    static let unproven = NothingStored(note: 0)

    /// The proof of a lookup that found nothing while the cache had stored `insertions` entries in all.
    init(insertions: UInt64) {
        note = insertions &+ 1
    }

    /// A proof as a flight keeps it (``note``).
    init(note: UInt64) {
        self.note = note
    }

    /// Whether a lookup proved anything.
    var isProven: Bool { note != 0 }
}

extension ResponseCache {
    /// Counts the miss of a lookup that `proof` makes unnecessary, and returns `true`, when nothing was stored since
    /// the lookup that proved it; `false`, counting nothing, when something was (the caller then looks up itself).
    ///
    /// Without the cache's lock: the joiners of a burst would take it one after another only to read a number. A store
    /// that lands while this reads is one that came just after the caller's look, which then joins as it would have.
    nonisolated func countMiss(ifStill proof: NothingStored) -> Bool {
        guard proof.isProven, NothingStored(insertions: insertions.count.load(ordering: .relaxed)) == proof else {
            return false
        }
        insertions.provenMisses.wrappingAdd(1, ordering: .relaxed)
        return true
    }
}

/// A cache's count of insertions (``CacheStorage/insertions``), published by its storage under the cache's lock for
/// readers outside it, and the misses counted for the lookups the count proved unnecessary (added to
/// ``ResponseCache/statistics``).
final class PublishedInsertions: Sendable {
    let count = Atomic<UInt64>(0)
    let provenMisses = Atomic(0)
}

extension CacheLookup {
    /// Whether a lookup of `request` that finds nothing stored is a plain ``miss``, counted as one: a `GET` without
    /// conditional fields (``isServable(_:)``) and without `Cache-Control` of its own, which may say
    /// `only-if-cached`. One pass over the request's fields.
    static func missesPlainly(_ request: TransportRequest) -> Bool {
        guard request.method == .get else { return false }
        return !request.headers.fields.contains { field in
            let name = field.canonicalName
            return name == "cache-control"
                || (name.utf8.first == UInt8(ascii: "i") && callerConditionalFields.contains(name))
        }
    }
}
