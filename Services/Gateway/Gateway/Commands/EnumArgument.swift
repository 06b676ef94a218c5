// An option whose values are an enum's raw strings (`--sort amount`, `--water salt`).
// ArgumentParser's own defaults describe such values by string interpolation and a key
// path, and at run time each makes the Swift runtime scan every conformance record of the
// executable (about 50 µs a scan) while the command is parsed, before it does anything.
// These say the same (the raw values, and no separate descriptions), directly; the help
// they make is held by Tests/GatewayTests/CommandTreeTests.swift.
import ArgumentParser

protocol EnumArgument: ExpressibleByArgument, CaseIterable, RawRepresentable where RawValue == String {}

extension EnumArgument {
    public var defaultValueDescription: String { rawValue }
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }
}
