// Images through libvips, thinly: read a photo's header without decoding it, refuse what
// is not a JPEG, PNG, WebP or HEIC photo or is too large to decode safely, and make a JPEG
// thumbnail. libvips is started once per process. Calls run on a dispatch queue, off
// Swift's cooperative pool (decoding blocks); callers bound how many run at once (the
// records service runs photo work on a small pool, one job per user: RecordsService/
// Photos.swift). Decoding goes through `vips_thumbnail_buffer`, which shrinks on load
// (JPEG by up to 8 per side in the decoder, WebP to the target size), so a large JPEG
// costs about what its thumbnail does; formats without it (PNG, HEIC) decode in full,
// which is what the pixel budget bounds.
import CVipsShim
import Dispatch
import Foundation

/// The photo formats Logbook accepts.
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case jpeg, png, webp, heic

    public var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .heic: "image/heic"
        }
    }

    package var shimCode: Int32 {
        switch self {
        case .jpeg: Int32(LB_FORMAT_JPEG)
        case .png: Int32(LB_FORMAT_PNG)
        case .webp: Int32(LB_FORMAT_WEBP)
        case .heic: Int32(LB_FORMAT_HEIF)
        }
    }
}

/// What a file's header says, dimensions as displayed (EXIF orientation applied).
public struct ImageHeader: Sendable, Equatable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int
}

public struct Thumbnail: Sendable, Equatable {
    /// A JPEG.
    public var data: Data
    public var width: Int
    public var height: Int
}

public enum ImagingError: Error, Equatable, Sendable {
    /// Not a JPEG, PNG, WebP or HEIC file (or a format this libvips cannot read).
    case unsupported(detail: String?)
    /// A known format whose content cannot be decoded.
    case damaged(String)
    /// The header announces more pixels than the limits allow; nothing was decoded.
    case tooLarge(width: Int, height: Int)
    /// libvips itself failed (start-up, out of memory).
    case failed(String)
}

/// Makes thumbnails within limits that keep a hostile file from exhausting memory.
public struct Thumbnailer: Sendable {
    /// The thumbnail fits in `size`×`size`.
    public var size: Int
    /// The pixel budget: the largest image decoded, by its header, in pixels and on either
    /// side. Larger ones are refused before any pixel is decoded.
    public var maxPixels: Int
    public var maxSide: Int

    public init(size: Int = 256, maxPixels: Int = 50_000_000, maxSide: Int = 20_000) {
        self.size = size
        self.maxPixels = maxPixels
        self.maxSide = maxSide
    }

    public struct Result: Sendable {
        public var header: ImageHeader
        public var thumbnail: Thumbnail
    }

    /// Checks the header against the limits, then decodes and shrinks.
    public func make(from data: Data) async throws(ImagingError) -> Result {
        let (size, maxPixels, maxSide) = (self.size, self.maxPixels, self.maxSide)
        return try await Imaging.run { () throws(ImagingError) -> Result in
            let header = try Imaging.header(of: data)
            if header.width > maxSide || header.height > maxSide || header.width * header.height > maxPixels {
                throw .tooLarge(width: header.width, height: header.height)
            }
            return Result(header: header, thumbnail: try Imaging.thumbnail(of: data, size: size))
        }
    }
}

/// Direct calls into the shim. The synchronous ones block: call them inside `run`.
public enum Imaging {
    private static let queue = DispatchQueue(label: "logbook.imaging", attributes: .concurrent)

    package static let started: Swift.Result<Void, ImagingError> = {
        // One worker thread per pipeline: the service shares a small machine.
        lb_start("logbook", 1) == 0 ? .success(()) : .failure(.failed("libvips did not start: \(takeError())"))
    }()

    /// Runs blocking libvips work on the imaging queue (concurrently with other calls: the
    /// caller bounds how many).
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws(ImagingError) -> T)
        async throws(ImagingError)
        -> T
    {
        let outcome: Swift.Result<T, ImagingError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(
                    returning: Swift.Result { () throws(ImagingError) -> T in
                        try started.get()
                        return try work()
                    })
            }
        }
        return try outcome.get()
    }

    /// Whether this libvips can read HEIC (it needs libheif).
    public static var readsHEIC: Bool {
        (try? started.get()) != nil && lb_has_operation("heifload_buffer") != 0
    }

    /// Format and displayed dimensions, from the header only.
    public static func header(of data: Data) throws(ImagingError) -> ImageHeader {
        try started.get()
        var info = lb_image_info()
        let status = data.withUnsafeBytes { lb_probe($0.baseAddress, $0.count, &info) }
        switch status {
        case 0: break
        case 1: throw .unsupported(detail: nil)
        default: throw .damaged(takeError())
        }
        let format: ImageFormat
        switch info.format {
        case Int32(LB_FORMAT_JPEG): format = .jpeg
        case Int32(LB_FORMAT_PNG): format = .png
        case Int32(LB_FORMAT_WEBP): format = .webp
        case Int32(LB_FORMAT_HEIF):
            // libheif also reads AVIF; only HEIC photos are accepted.
            guard isHEIC(data) else { throw .unsupported(detail: "an AVIF or other HEIF image") }
            format = .heic
        default: throw .unsupported(detail: nil)
        }
        return ImageHeader(format: format, width: Int(info.display_width), height: Int(info.display_height))
    }

    /// A JPEG thumbnail fitting in `size`×`size`, upright, never enlarged.
    public static func thumbnail(of data: Data, size: Int) throws(ImagingError) -> Thumbnail {
        try started.get()
        var out: UnsafeMutableRawPointer?
        var length = 0
        var width: Int32 = 0
        var height: Int32 = 0
        let status = data.withUnsafeBytes {
            lb_thumbnail($0.baseAddress, $0.count, Int32(size), &out, &length, &width, &height)
        }
        defer { lb_free(out) }
        guard status == 0, let out else { throw .damaged(takeError()) }
        return Thumbnail(data: Data(bytes: out, count: length), width: Int(width), height: Int(height))
    }

    /// The ISO base media `ftyp` brand says HEIC (not AVIF).
    static func isHEIC(_ data: Data) -> Bool {
        guard data.count >= 12, data.dropFirst(4).prefix(4).elementsEqual("ftyp".utf8) else { return false }
        let brand = String(decoding: data.dropFirst(8).prefix(4), as: UTF8.self)
        return ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand)
    }

    /// libvips's error text, one line, without the operation names it prefixes.
    package static func takeError() -> String {
        guard let text = lb_error() else { return "unknown error" }
        defer { lb_free(text) }
        let lines = String(cString: text).split(separator: "\n").map { line -> String in
            // "VipsJpeg: Premature end of input file" → "Premature end of input file"
            if let colon = line.firstIndex(of: ":"), !line[..<colon].contains(" ") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return line.trimmingCharacters(in: .whitespaces)
        }
        var unique: [String] = []
        for line in lines where !line.isEmpty && !unique.contains(line) { unique.append(line) }
        let joined = unique.joined(separator: "; ")
        return joined.isEmpty ? "unknown error" : String(joined.prefix(300))
    }
}
