// Time to make one catch photo's thumbnail: a generated photo-sized JPEG (4000×3000 by
// default, noise and gradients so it compresses like a photo rather than a flat colour)
// through the same Thumbnailer the records service uses — header check, decode with
// shrink-on-load, resize, JPEG encode — on its serial libvips queue.
import ArgumentParser
import Foundation
import Imaging
import ImagingFixtures

struct ThumbnailBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail", abstract: "Make a catch photo's 256 px thumbnail with libvips.")

    @Option(help: "Thumbnails to time.") var count = 20
    @Option(help: "Untimed thumbnails first.") var warmup = 2
    @Option(help: "Width of the generated photo.") var width = 4000
    @Option(help: "Height of the generated photo.") var height = 3000
    @Option(help: "Format of the generated photo: jpeg, png, webp or heic.") var format = "jpeg"

    func run() async throws {
        guard let format = ImageFormat(rawValue: format) else {
            throw ValidationError(
                "--format must be one of \(ImageFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let (width, height) = (self.width, self.height)
        let photo = try await Imaging.run { () throws(ImagingError) in
            try Imaging.testImage(width: width, height: height, format: format)
        }
        let thumbnailer = Thumbnailer()
        print(
            "logbook-bench thumbnail: \(width)×\(height) \(format.rawValue), \(photo.count) bytes, \(count) runs, "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores")
        for _ in 0..<warmup { _ = try await thumbnailer.make(from: photo) }
        var samples: [Double] = []
        var last: Thumbnailer.Result?
        let clock = ContinuousClock()
        for _ in 0..<count {
            let start = clock.now
            last = try await thumbnailer.make(from: photo)
            let elapsed = clock.now - start
            samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        }
        if let last {
            print(
                "thumbnail: \(last.thumbnail.width)×\(last.thumbnail.height) JPEG, \(last.thumbnail.data.count) bytes")
        }
        print(
            String(
                format: "time per thumbnail: p50 %.1f ms  p90 %.1f ms  min %.1f ms  max %.1f ms",
                percentile(samples, 0.5), percentile(samples, 0.9), samples.min() ?? 0, samples.max() ?? 0))
    }
}
