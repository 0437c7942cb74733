import Testing

@testable import Courier

/// The constant masks of `ByteSet` stand for exactly the characters their documentation names.
@Suite struct ByteSetTests {
    private static let letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    private static let unreserved = letters + "0123456789-._~"

    @Test(arguments: [
        (ByteSet.letters, letters),
        (ByteSet.schemeCharacters, letters + "0123456789+-."),
        (ByteSet.tokenCharacters, "!#$%&'*+-.^_`|~0123456789" + letters),
        (ByteSet.unreserved, unreserved),
        (ByteSet.urlTarget, unreserved + "!$&'()*+,;=:@/?%"),
    ])
    func eachConstantMaskHoldsExactlyItsCharacters(set: ByteSet, characters: String) {
        #expect(set == ByteSet(characters))
        for byte in UInt8.min...UInt8.max {
            #expect(set.contains(byte) == characters.utf8.contains(byte), "byte \(byte)")
        }
    }
}
