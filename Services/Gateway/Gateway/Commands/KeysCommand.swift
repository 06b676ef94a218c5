// `logbook keys generate`: a new CURVE keypair for a host, printed as the two logbook.conf
// lines that hold it (docs/operations.md, "More than one machine"). It reads no
// configuration, so it works while the current one is being fixed.
import ArgumentParser
import Foundation
import Runtime
import Wire

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "CURVE keys for encrypted, authenticated links between machines.",
        subcommands: [KeysGenerate.self])
}

struct KeysGenerate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Print a new CURVE keypair for this host, as logbook.conf lines.",
        discussion: """
            Put both lines in this host's logbook.conf (the secret key stays on this host, in a \
            file only you can read) and add the public key to LOGBOOK_CURVE_ALLOW on every host \
            that should accept this one, this host included. Other hosts name it as \
            LOGBOOK_<SERVICE>_CURVE_PUBLIC_KEY for the services running here. The values are \
            single-quoted so they can be pasted into a shell too (Z85 keys contain $, & and #).
            """)

    @OptionGroup var global: GlobalOptions

    mutating func run() async throws {
        do {
            let pair = try CurveSettings.generateKeyPair()
            if global.json {
                Output.json(["publicKey": .string(pair.publicKey), "secretKey": .string(pair.secretKey)] as JSONValue)
            } else {
                Output.line(
                    """
                    # CURVE keypair generated \(WireTime.format(Date())); keep the secret key on this host only.
                    # Add the public key to LOGBOOK_CURVE_ALLOW on every host that should accept this one.
                    \(CurveSettings.publicKeySetting)='\(pair.publicKey)'
                    \(CurveSettings.secretKeySetting)='\(pair.secretKey)'
                    """)
            }
        } catch let error as ConfigurationError {
            throw Failure.report(ServiceError(.failedPrecondition, error.description), json: global.json)
        } catch {
            throw Failure.report(error, json: global.json)
        }
    }
}
