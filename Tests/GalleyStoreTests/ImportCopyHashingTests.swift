import Testing
@testable import GalleyStore
@testable import GalleyStorePostgres
@testable import GalleyStoreSQLite

/// Where an import hashes its kept zip's copy: paired with the files wherever the CPU gains by
/// it, else in the files' gaps from 1 GiB of files up, on the copy's own thread below.
struct ImportCopyHashingTests {
    @Test(arguments: [
        (Int64(0), ImportPass.CopyHashing.onItsOwnThread),
        (190_000_000, .onItsOwnThread),           // 300 articles of the bench
        ((1 << 30) - 1, .onItsOwnThread),
        (1 << 30, .inTheFilesGaps),
        (1_900_000_000, .inTheFilesGaps),         // 3,000 articles
    ])
    func theCopyIsHashedWhereItPays(total: Int64, unpaired: ImportPass.CopyHashing) {
        #expect(ImportPass.CopyHashing.of(total: total, pairingPays: false) == unpaired)
        #expect(ImportPass.CopyHashing.of(total: total, pairingPays: true) == .pairedWithFiles)
    }
}
