// logbook-http: the HTTP edge (Services/HTTPGateway/HTTPGateway/Edge.swift). Started by
// `logbook stack up` like the services; once listening it writes its address to
// run/logbook-http.url (LOGBOOK_HTTP_LISTEN may name port 0: any free port).
// `logbook-http --openapi` prints the OpenAPI document (docs/openapi.json is that output);
// `logbook-http --probe [--path /readyz] [--timeout S] [--wait S]` asks this machine's
// edge over HTTP(S) and exits 0 for a 200, 7 otherwise (HTTPGateway/Probe.swift).
import Foundation
import HTTPGateway
import Runtime

if CommandLine.arguments.dropFirst().first == "--openapi" {
    FileHandle.standardOutput.write(OpenAPI.document())
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "--probe" {
    ProcessMain.run {
        do {
            let configuration = try StackConfiguration.load()
            exit(
                await EdgeProbe.run(arguments: Array(CommandLine.arguments.dropFirst(2)), configuration: configuration))
        } catch {
            FileHandle.standardError.write(Data("logbook-http --probe: \(error)\n".utf8))
            exit(1)
        }
    }
}

ProcessMain.run {
    await ServiceMain.run(
        "logbook-http",
        otherUsage: [
            "  --openapi   Print the OpenAPI document of the edge (docs/openapi.json) and exit.",
            "  --probe [--path /readyz] [--timeout S] [--wait S]",
            "              Ask this machine's edge over HTTP(S); exit 0 on a 200, 7 otherwise.",
        ]
    ) { configuration, logger in
        let settings = try EdgeSettings(configuration: configuration)
        let needed = settings.maxConnections + DescriptorLimit.reserve
        let descriptors = DescriptorLimit.raise(to: needed)
        if descriptors.soft < needed {
            logger.warning(
                "fewer descriptors than LOGBOOK_HTTP_MAX_CONNECTIONS needs: lower it, or raise the hard limit (LimitNOFILE= in the unit)",
                metadata: ["descriptors": "\(descriptors.soft)", "needed": "\(needed)"])
        }
        // TLS files are read and checked now: a bad one stops the edge before it listens.
        let tls = try settings.tls()
        if let tls {
            logger.info(
                "tls", metadata: ["certificate": "\(tls.certificatePath)", "notValidAfter": "\(tls.notValidAfter)"])
            if tls.notValidAfter < Date() {
                logger.warning(
                    "the TLS certificate has expired: clients will refuse it",
                    metadata: ["certificate": "\(tls.certificatePath)"])
            }
        }
        let edge = Edge(configuration: configuration, settings: settings, tls: tls, logger: logger)
        let urlFile = configuration.runDirectory + "/logbook-http.url"
        return [
            try edge.application { url in
                let temporary = urlFile + ".tmp"
                if FileManager.default.createFile(atPath: temporary, contents: Data((url + "\n").utf8)) {
                    rename(temporary, urlFile)
                }
                logger.info("listening", metadata: ["url": "\(url)"])
            }
        ]
    }
}
