// logbook-http: the HTTP edge (Services/HTTPGateway/HTTPGateway/Edge.swift). Started by
// `logbook stack up` like the services; once listening it writes its address to
// run/logbook-http.url (LOGBOOK_HTTP_LISTEN may name port 0: any free port).
// `logbook-http --openapi` prints the OpenAPI document (docs/openapi.json is that output).
import Foundation
import HTTPGateway
import Runtime

if CommandLine.arguments.dropFirst().first == "--openapi" {
    FileHandle.standardOutput.write(OpenAPI.document())
    exit(0)
}

await ServiceMain.run("logbook-http") { configuration, logger in
    let settings = try EdgeSettings(configuration: configuration)
    let edge = Edge(configuration: configuration, settings: settings, logger: logger)
    let urlFile = configuration.runDirectory + "/logbook-http.url"
    return [
        edge.application { url in
            let temporary = urlFile + ".tmp"
            if FileManager.default.createFile(atPath: temporary, contents: Data((url + "\n").utf8)) {
                rename(temporary, urlFile)
            }
            logger.info("listening", metadata: ["url": "\(url)"])
        }
    ]
}
