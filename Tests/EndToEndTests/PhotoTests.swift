// A catch's photo end to end: `catch add --photo`, `catch show` with its thumbnail,
// `catch photo -o` returning the original byte for byte, the thumbnail within 256 px, and an
// oversize file refused by the CLI with a clear message before anything is sent.
import Foundation
import Imaging
import ImagingFixtures
import Testing

@Suite("catch photos end to end", .serialized, .timeLimit(.minutes(3)))
struct PhotoTests {
    @Test("add with a photo, show it, fetch it back; too big is refused clearly")
    func photoRoundTrip() async throws {
        try await withStack(environment: ["LOGBOOK_RECORDS_PHOTO_MAX_BYTES": "2000000"]) { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "stack up failed: \(up.stderr)")
            let register = try await stack.logbook("register", "angler", "--password-stdin", stdin: "correct horse battery staple\n")
            try #require(register.status == 0, "\(register.stderr)")

            let jpeg = try await Imaging.run { () throws(ImagingError) in try Imaging.testImage(width: 1200, height: 800) }
            let original = stack.home + "/pike.jpg"
            try jpeg.write(to: URL(fileURLWithPath: original))
            let added = try await stack.logbook(
                "catch", "add", "--species", "Pike", "--weight", "3.1", "--bait", "spoon", "--water", "fresh",
                "--lat", "59.3", "--lon", "18.1", "--photo", original, "--json")
            try #require(added.status == 0, "\(added.stderr)")
            let id = try #require(added.object["id"] as? String)
            let photo = try #require(added.object["photo"] as? [String: Any])
            let thumbnail = try #require(photo["thumbnail"] as? [String: Any])
            let (w, h) = (thumbnail["width"] as? Int ?? 0, thumbnail["height"] as? Int ?? 0)
            #expect(max(w, h) <= 256 && abs(Double(w) / Double(h) - 1.5) < 0.02, "thumbnail \(w)×\(h)")

            let show = try await stack.logbook("catch", "show", id)
            #expect(show.stdout.contains("1200×800"), "\(show.stdout)")
            #expect(show.stdout.contains("thumbnail \(w)×\(h)"))
            let list = try await stack.logbook("catch", "list")
            #expect(list.stdout.contains("yes"), "the list marks the photo")

            let back = stack.home + "/back.jpg"
            let fetched = try await stack.logbook("catch", "photo", id, "-o", back)
            #expect(fetched.status == 0, "\(fetched.stderr)")
            #expect(FileManager.default.contents(atPath: back) == jpeg, "the original, byte for byte")
            let small = stack.home + "/small.jpg"
            #expect(try await stack.logbook("catch", "photo", id, "--thumbnail", "-o", small).status == 0)
            // an existing file is kept unless --force
            let again = try await stack.logbook("catch", "photo", id, "-o", small)
            #expect(again.status != 0 && again.stderr.contains("already exists; pass --force"), "\(again.stderr)")
            #expect(FileManager.default.contents(atPath: small) != jpeg, "the thumbnail was not overwritten")
            #expect(try await stack.logbook("catch", "photo", id, "-o", back, "--force").status == 0)
            let header = try Imaging.header(of: try #require(FileManager.default.contents(atPath: small)))
            #expect(header.width == w && header.height == h && header.format == .jpeg)

            // Over the stack's limit (2 MB here): refused by the CLI, with both sizes named.
            let big = stack.home + "/big.jpg"
            try Data(repeating: 0xFF, count: 3_000_000).write(to: URL(fileURLWithPath: big))
            let refused = try await stack.logbook(
                "catch", "edit", id, "--photo", big)
            #expect(refused.status == 2, "\(refused.stderr)")
            #expect(refused.stderr.contains("photo: must be at most 1.9 MiB (got 2.9 MiB"), "\(refused.stderr)")
            // The service refuses a photo that is not an image.
            let text = stack.home + "/notes.jpg"
            try Data("just some notes".utf8).write(to: URL(fileURLWithPath: text))
            let notImage = try await stack.logbook("catch", "edit", id, "--photo", text)
            #expect(notImage.status == 2)
            #expect(notImage.stderr.contains("photo:"), "\(notImage.stderr)")
        }
    }
}
