import Testing
import GalleyCore
@testable import GalleyKit

/// The manifest's index keeps one `AssetRef` for every asset of the issue (60,000 at 30,000
/// articles) until the whole-issue checks have run: its names in one buffer, its fields packed.
@Suite struct ManifestIndexTests {
    static func asset(_ fileName: String?, crop: String?, _ index: inout ManifestIndex) -> ManifestIndex.AssetRef {
        ManifestIndex.AssetRef(id: "a", kind: .image, fileName: fileName, crop: crop, variants: [], declaredWidth: nil, declaredHeight: nil,
                               position: 0, line: 1, article: nil, fileNames: &index.fileNames)
    }

    @Test func eachAssetGetsItsOwnFileNameAndCropBack() {
        var index = ManifestIndex()
        let cases: [(fileName: String?, crop: String?)] = [
            ("cover.jpg", "cover.jpg"), (nil, nil), ("", ""), ("café/été 🌊.png", "thumbs/été.png"), ("a.mp3", nil),
            (nil, "only-crop.jpg"), ("b.jpg", ""),
        ]
        let refs = cases.map { Self.asset($0.fileName, crop: $0.crop, &index) }
        for (ref, expected) in zip(refs, cases) {
            #expect(index.fileName(of: ref) == expected.fileName)
            #expect(index.crop(of: ref) == expected.crop)
        }
    }

    @Test func anAssetTakesFiftySixBytes() {
        // One-byte fields fill the id's last word; a name on the heap each was 64 more.
        #expect(MemoryLayout<ManifestIndex.AssetRef>.stride == 56)
    }
}
