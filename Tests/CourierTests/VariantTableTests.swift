import Foundation
import Testing

@testable import Courier

/// The table behind the cache's URL index (open addressing, removal by shifting back, no tombstones) holds exactly what
/// a dictionary would, through runs of additions and removals that wrap around its end, collide, and grow it.
@Suite struct VariantTableTests {
    @Test(arguments: [0, 64])
    func aTableHoldsWhatADictionaryHolds(room: Int) {
        var random = SplitMix64(seed: UInt64(room) + 7)
        var table = VariantTable(room: room)
        var model: [String: [Int]] = [:]
        let urls = (0..<300).map { URLText("https://api.example.com/items?key=\($0)") }
        for step in 0..<20_000 {
            let url = urls[Int.random(in: 0..<urls.count, using: &random)]
            let slot = Int.random(in: 0..<3, using: &random)
            if Bool.random(using: &random) {
                table.modify(url) { $0.append(slot) }
                model[url.text, default: []].append(slot)
            } else {
                table.modify(url) { $0.remove(slot) }
                model[url.text]?.removeAll { $0 == slot }
                if model[url.text]?.isEmpty == true { model[url.text] = nil }
            }
            guard step % 97 == 0 else { continue }
            #expect(table.count == model.count, "step \(step)")
            for url in urls {
                #expect(table[url].map(Array.init) == model[url.text], "step \(step), \(url.text)")
            }
        }
        #expect(Set(table.urls.map(\.text)) == Set(model.keys))
        #expect(table.capacity >= 2 * table.count)
    }

    @Test func aTableEmptiedAndFilledForeverStaysHalfFullAtMost() {
        var table = VariantTable(room: 9)  // 8 held, and the new one before the oldest goes
        let capacity = table.capacity
        // A cache of ever-new URLs: each new one added, the oldest removed, 8 held at a time.
        for key in 0..<5_000 {
            table.modify(URLText("https://api.example.com/items?key=\(key)")) { $0.append(key) }
            if key >= 8 {
                let oldest = URLText("https://api.example.com/items?key=\(key - 8)")
                table.modify(oldest) { $0.remove(key - 8) }
                #expect(table[oldest] == nil)
            }
        }
        #expect(table.count == 8)
        #expect(table.capacity == capacity, "never grew")
        for key in 4_992..<5_000 {
            #expect(table[URLText("https://api.example.com/items?key=\(key)")].map(Array.init) == [key])
        }
    }
}
