import Testing
import GalleyCore

struct PackedStringsTests {
    @Test func eachStringComesBackByItsNumber() {
        var packed = PackedStrings()
        let texts = ["article-1-a.jpg", "", "café/été 🌊.png", "x", ""]
        let numbers = texts.map { packed.append($0) }
        #expect(numbers == Array(0..<texts.count))
        #expect(Array(packed) == texts)
        #expect(packed[2] == "café/été 🌊.png")
        // A slice is copied in, not kept: the string it came from can go.
        let long = "org.example.issue/" + String(repeating: "n", count: 40)
        packed.append(long.dropFirst("org.example.issue/".count))
        #expect(packed.last == String(repeating: "n", count: 40))
    }
}
