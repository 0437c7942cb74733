import Foundation

/// A valid gzip stream (RFC 1952) of nothing but zero bytes, built without zlib: one fixed-Huffman deflate block
/// (RFC 1951 §3.2.6) holding a literal zero and then back-references of 258 bytes at distance 1, 13 bits each, so
/// 8 MiB of zeros take about 50 KiB. For tests of decompression limits.
enum GzipBomb {
    /// The gzip stream of `1 + 258 × repeats` zero bytes (see ``decodedCount(repeats:)``).
    static func zeros(repeats: Int) -> Data {
        var bits = BitWriter()
        bits.write(1, count: 1)  // BFINAL
        bits.write(1, count: 2)  // BTYPE 01: fixed Huffman codes
        bits.writeCode(0x30, length: 8)  // literal 0x00: codes 0–143 are 0x30 + value, 8 bits
        for _ in 0..<repeats {
            bits.writeCode(0xC5, length: 8)  // length 258: symbol 285, codes 280–287 are 0xC0 + (symbol − 280)
            bits.writeCode(0, length: 5)  // distance 1: distance code 0, 5 bits
        }
        bits.writeCode(0, length: 7)  // end of block: symbol 256, 7 zero bits
        let count = decodedCount(repeats: repeats)
        var stream = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3])  // magic, deflate, no flags, no mtime, Unix
        stream.append(contentsOf: bits.bytes)
        stream.append(littleEndian: crc32OfZeros(count: count))
        stream.append(littleEndian: UInt32(truncatingIfNeeded: count))
        return stream
    }

    /// The gzip stream of `count` zero bytes in one stored (uncompressed) deflate block: 23 bytes longer than what
    /// it decodes to, so its `Content-Length` exceeds its decoded size. `count` must fit in 16 bits.
    static func stored(zeros count: Int) -> Data {
        var stream = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3])
        stream.append(1)  // BFINAL, BTYPE 00: stored, then aligned to the byte
        let length = UInt16(count)
        stream.append(contentsOf: [
            UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8),
        ])
        stream.append(Data(count: count))
        stream.append(littleEndian: crc32OfZeros(count: count))
        stream.append(littleEndian: UInt32(count))
        return stream
    }

    /// How many zero bytes ``zeros(repeats:)`` inflates to.
    static func decodedCount(repeats: Int) -> Int { 1 + 258 * repeats }

    /// CRC-32 (IEEE, reflected) of `count` zero bytes.
    static func crc32OfZeros(count: Int) -> UInt32 {
        let table: [UInt32] = (0..<256).map { index in
            (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return table.withUnsafeBufferPointer { table in
            var crc: UInt32 = 0xFFFF_FFFF
            for _ in 0..<count { crc = table[Int(crc & 0xFF)] ^ (crc >> 8) }
            return ~crc
        }
    }

    /// Packs bits least significant first, as deflate does; Huffman codes go in most significant bit first.
    private struct BitWriter {
        private var full: [UInt8] = []
        private var buffer: UInt32 = 0
        private var filled = 0

        mutating func write(_ value: UInt32, count: Int) {
            buffer |= value << filled
            filled += count
            while filled >= 8 {
                full.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                filled -= 8
            }
        }

        mutating func writeCode(_ code: UInt32, length: Int) {
            var reversed: UInt32 = 0
            for bit in 0..<length where code & (1 << bit) != 0 { reversed |= 1 << (length - 1 - bit) }
            write(reversed, count: length)
        }

        /// Everything written, the last partial byte padded with zero bits.
        var bytes: [UInt8] { filled > 0 ? full + [UInt8(truncatingIfNeeded: buffer)] : full }
    }
}

extension Data {
    fileprivate mutating func append(littleEndian value: UInt32) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
