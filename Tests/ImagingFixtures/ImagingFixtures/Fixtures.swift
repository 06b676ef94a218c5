// Images for tests and benchmarks, generated through libvips: kept out of Shared/Imaging so
// no service carries them. RecordsTests, EndToEndTests and logbook-bench import this.
import CImagingFixtures
import CVipsShim
import Foundation
import Imaging

extension Imaging {
    /// A generated image (noise and gradients, so every call differs) for tests and
    /// benchmarks; `orientation` 1–8 is stored as EXIF orientation (JPEG only).
    public static func testImage(width: Int, height: Int, format: ImageFormat = .jpeg, orientation: Int = 0)
        throws(ImagingError) -> Data
    {
        try started.get()
        var out: UnsafeMutableRawPointer?
        var length = 0
        let status = lb_make_test_image(Int32(width), Int32(height), format.shimCode, Int32(orientation), &out, &length)
        defer { lb_fixture_free(out) }
        guard status == 0, let out else { throw .failed(takeError()) }
        return Data(bytes: out, count: length)
    }

    /// A flat image of `width`×`height` in a tiny file (JPEG or PNG), for tests and benchmarks.
    public static func flatImage(width: Int, height: Int, format: ImageFormat) throws(ImagingError) -> Data {
        try started.get()
        var out: UnsafeMutableRawPointer?
        var length = 0
        let status = lb_make_flat_image(Int32(width), Int32(height), format.shimCode, &out, &length)
        defer { lb_fixture_free(out) }
        guard status == 0, let out else { throw .failed(takeError()) }
        return Data(bytes: out, count: length)
    }
}
