// The edge raises its soft limit on descriptors to what its connections need, within the
// hard limit (Services/HTTPGateway/HTTPGateway/DescriptorLimit.swift).
import Foundation
import HTTPGateway
import Testing

@Suite(.serialized) struct DescriptorLimitTests {
    @Test func theSoftLimitIsRaisedToWhatIsNeededWithinTheHardOne() throws {
        var saved = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) == 0)
        defer { _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
        let hard = Int(clamping: saved.rlim_max)
        try #require(hard >= 1024, "this machine's hard limit (\(hard)) is too low to test")

        var low = saved
        low.rlim_cur = 512
        try #require(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &low) == 0)
        let raised = DescriptorLimit.raise(to: 1000)
        #expect(raised.soft == 1000 && raised.hard == hard)
        var now = rlimit()
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &now)
        #expect(now.rlim_cur == 1000, "the limit in force, read back from the process")

        // Never lowered, never past the hard limit.
        #expect(DescriptorLimit.raise(to: 600).soft == 1000)
        #expect(DescriptorLimit.raise(to: hard + 1000).soft == hard)
    }
}
