// FileSync.exchange: two folders swap names in one step (renameat2, RENAME_EXCHANGE), as a
// restore swaps the photo folder with its copy (Shared/Runtime/FileSync.swift).
import Foundation
import Runtime
import Testing

@Suite struct FileExchangeTests {
    @Test func twoFoldersSwapNames() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let live = scratch.path + "/photos"
        let staging = scratch.path + "/photos.restoring"
        for (folder, file) in [(live, "old"), (staging, "new")] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(file.utf8).write(to: URL(fileURLWithPath: folder + "/" + file))
        }
        #expect(FileSync.exchange(staging, live))
        #expect(try FileManager.default.contentsOfDirectory(atPath: live) == ["new"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: staging) == ["old"])
        // nothing to swap with: false, and nothing changed
        #expect(!FileSync.exchange(staging, scratch.path + "/missing"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: staging) == ["old"])
    }
}
