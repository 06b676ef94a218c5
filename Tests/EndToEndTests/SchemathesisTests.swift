// An independent client: Schemathesis (from PyPI; deploy/test.sh installs it when it is
// missing) reads the edge's own /openapi.json and sends generated requests to the live
// edge of a real stack, with a registered user's token, for a fixed budget of examples per
// operation (its coverage and fuzzing phases, and its stateful phase along the document's
// links from each create to what it made). The run must find no server error (5xx) and no
// response the document does not allow (status, media type, headers, body schema).
//
// Left out of the run, each for a reason of the test's, not of the edge's: logging out,
// changing the password and deleting the account (they would end the token the rest of
// the run needs; the route tests cover them), and /v1/weather (the test stack has no
// weather provider, so it answers 503 `unavailable` by design).
import Foundation
import Testing

@Suite("Schemathesis against the live edge", .serialized)
struct SchemathesisTests {
    static let examples = 20

    /// `schemathesis` on PATH, in ~/.local/bin, beside the python3 that installed it, or in
    /// the venv deploy/test.sh installs it into.
    static func executable() -> String? {
        let environment = ProcessInfo.processInfo.environment
        var directories = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        directories.append(Tool.repository + "/.build/deploy-venv/bin")
        directories.append(NSHomeDirectory() + "/.local/bin")
        directories.append(NSHomeDirectory() + "/.pyenv/shims")
        let python = Process()
        let pipe = Pipe()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", "import sysconfig; print(sysconfig.get_path('scripts'))"]
        python.standardOutput = pipe
        python.standardError = FileHandle.nullDevice
        if (try? python.run()) != nil {
            python.waitUntilExit()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            directories.append(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        for directory in directories {
            let candidate = "\(directory)/schemathesis"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    @Test("0 server errors and 0 responses that break the document")
    func run() async throws {
        let schemathesis = try #require(
            Self.executable(), "schemathesis is not installed: `pip install schemathesis` (deploy/test.sh installs it when missing)")
        try await withStack { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            let client = try await stack.edge()
            let token = try await stack.httpUser(client, "fuzz")
            // Something to find: a car with a fill-up, an expense.
            let car = try await client.send("POST", "/v1/cars", json: ["nickname": "Van"], token: token)
            let carId = try #require(car.json["id"] as? String)
            _ = try await client.send("POST", "/v1/cars/\(carId)/fillups", json: ["odometer": 100, "volume": 10, "totalMinor": 1000], token: token)
            _ = try await client.send("POST", "/v1/expenses", json: ["name": "Bread", "amountMinor": 250], token: token)

            let report = stack.home + "/schemathesis.json"
            let out = stack.home + "/schemathesis.out"
            _ = FileManager.default.createFile(atPath: out, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: schemathesis)
            process.arguments = [
                "run", client.base + "/openapi.json",
                "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance",
                "--max-examples", String(Self.examples),
                "--phases", "examples,coverage,fuzzing,stateful",
                "--generation-deterministic",
                "--request-timeout", "10",
                "--header", "Authorization: Bearer \(token)",
                "--exclude-operation-id", "authLogout",
                "--exclude-operation-id", "authPasswordChange",
                "--exclude-operation-id", "authAccountDelete",
                "--exclude-operation-id", "weatherGet",
                "--report", "ndjson", "--report-ndjson-path", report,
                "--no-color",
            ]
            var environment = ProcessInfo.processInfo.environment
            environment["SCHEMATHESIS_TELEMETRY"] = "false"
            process.environment = environment
            // Its cache (.schemathesis/) goes with the throwaway stack, not into the repository.
            process.currentDirectoryURL = URL(fileURLWithPath: stack.home)
            process.standardOutput = FileHandle(forWritingAtPath: out)
            process.standardError = process.standardOutput
            try process.run()
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(150)
            while process.isRunning {
                if clock.now >= deadline {
                    process.terminate()
                    Issue.record("schemathesis did not finish within 150 s")
                    break
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            process.waitUntilExit()
            let output = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            // The summary (operations and test cases), for the log.
            if let summary = output.range(of: "SUMMARY") { print("schemathesis " + output[summary.lowerBound...]) }
            #expect(process.terminationStatus == 0, "schemathesis found problems:\n\(output.suffix(6000))")
            #expect(!output.contains("Server error"), "a 5xx answer:\n\(output.suffix(4000))")
            let tested = output.contains("API Operations") || output.contains("operations")
            #expect(tested, "schemathesis tested nothing:\n\(output.suffix(2000))")
        }
    }
}
