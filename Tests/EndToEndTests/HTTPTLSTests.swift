// TLS inside the HTTP edge (LOGBOOK_HTTP_TLS_CERT / LOGBOOK_HTTP_TLS_KEY): a throwaway
// self-signed certificate made with the openssl CLI; the edge started by `logbook stack up`
// with it answers a real HTTPS client (curl, trusting that certificate and nothing else)
// on /healthz and on an authenticated route; the same client without the certificate,
// and plain HTTP to the same port, get nothing. Bad TLS settings stop the edge at start
// with a message naming the setting and the file.
import Foundation
import Testing

@Suite("HTTP edge with TLS", .serialized)
struct HTTPTLSTests {
    /// A scratch folder with `cert.pem`/`key.pem` (self-signed, for 127.0.0.1 and
    /// localhost, one day) and `other-key.pem` (a key of no certificate).
    static func certificates() async throws -> String {
        let openssl = try #require(Tool.find("openssl"), "openssl is not installed (deploy/test.sh installs it)")
        let folder = "/tmp/lbtls-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let made = try await Tool.run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=logbook test", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem",
        ])
        try #require(made.status == 0, "openssl req: \(made.stderr)")
        let other = try await Tool.run(openssl, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", folder + "/other-key.pem"])
        try #require(other.status == 0, "openssl genpkey: \(other.stderr)")
        return folder
    }

    static func curl() throws -> String {
        try #require(Tool.find("curl"), "curl is not installed (deploy/test.sh installs it)")
    }

    /// `curl` with `arguments`: the HTTP status it printed (0 when it got no answer) and its exit status.
    static func curl(_ arguments: [String]) async throws -> (http: Int, exit: Int32, body: String) {
        let marker = "\n~status~"
        let result = try await Tool.run(
            try curl(), ["-sS", "--max-time", "10", "-w", marker + "%{http_code}"] + arguments, timeout: .seconds(30))
        let parts = result.stdout.components(separatedBy: marker)
        return (Int(parts.last ?? "") ?? 0, result.status, parts.dropLast().joined(separator: marker) + result.stderr)
    }

    @Test("an HTTPS client trusting the edge's certificate gets /healthz and an authenticated route; others get nothing")
    func https() async throws {
        let certs = try await Self.certificates()
        defer { try? FileManager.default.removeItem(atPath: certs) }
        let settings = [
            "LOGBOOK_HTTP_TLS_CERT": certs + "/cert.pem", "LOGBOOK_HTTP_TLS_KEY": certs + "/key.pem",
            "LOGBOOK_HTTP_REQUEST_TIMEOUT": "1.5",
        ]
        try await withStack(environment: settings) { stack in
            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            var base = ""
            let listening = try await stack.eventually {
                base = ((try? String(contentsOfFile: stack.runDirectory + "/logbook-http.url", encoding: .utf8)) ?? "")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return !base.isEmpty
            }
            try #require(listening, "the edge wrote no URL: \(stack.log("logbook-http"))")
            #expect(base.hasPrefix("https://127.0.0.1:"), "\(base)")
            let port = try #require(URLComponents(string: base)?.port)
            let trust = ["--cacert", certs + "/cert.pem"]

            let health = try await Self.curl(trust + [base + "/healthz"])
            #expect(health.http == 200 && health.body.contains("\"ok\""), "\(health)")
            // the whole path of a user: register, log in, an authenticated read, over TLS
            let json = ["-H", "Content-Type: application/json"]
            let credentials = #"{"username":"tilde","password":"\#(TestStack.password)"}"#
            let registered = try await Self.curl(trust + json + ["-d", credentials, base + "/v1/users"])
            #expect(registered.http == 201, "\(registered)")
            let login = try await Self.curl(trust + json + ["-d", credentials, base + "/v1/session"])
            #expect(login.http == 201, "\(login)")
            let token = try #require(
                (try? JSONSerialization.jsonObject(with: Data(login.body.utf8)) as? [String: Any])?["token"] as? String, "\(login.body)")
            let me = try await Self.curl(trust + ["-H", "Authorization: Bearer \(token)", base + "/v1/me"])
            #expect(me.http == 200 && me.body.contains("\"tilde\""), "\(me)")
            let forged = try await Self.curl(trust + ["-H", "Authorization: Bearer lbk_forged", base + "/v1/me"])
            #expect(forged.http == 401, "\(forged)")

            // the certificate is really checked: curl trusting only the system's CAs refuses it
            let untrusted = try await Self.curl([base + "/healthz"])
            #expect(untrusted.http == 0 && untrusted.exit == 60, "curl without the certificate: \(untrusted)")

            // plain HTTP to the TLS port: no HTTP answer, by curl or by hand
            let plain = try await Self.curl(["http://127.0.0.1:\(port)/healthz"])
            #expect(plain.http == 0 && plain.exit != 0, "plain HTTP on the TLS port: \(plain)")
            let raw = try RawConnection(port: port, receiveTimeout: 5)
            raw.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            let answer = raw.read()
            #expect(!answer.text.contains("HTTP/1.1") && !answer.text.contains("\"ok\""), "\(answer.text.prefix(200))")

            // a client that connects and never starts the handshake is cut off like a slow head
            let silent = try RawConnection(port: port, receiveTimeout: 8)
            let clock = ContinuousClock()
            let opened = clock.now
            let closed = silent.read()
            #expect(closed.closed && clock.now - opened < .seconds(5), "a silent TLS client after \(clock.now - opened): \(closed)")

            // the edge is fine after that, and its own probe (TLS, no identity check) says so
            let again = try await Self.curl(trust + [base + "/readyz"])
            #expect(again.http == 200, "\(again)")
            let probe = try await Tool.run(
                stack.binDirectory + "/logbook-http", ["--probe", "--path", "/readyz", "--timeout", "2"], environment: stack.environment)
            #expect(probe.status == 0 && probe.stdout.contains("https://127.0.0.1:\(port)/readyz"), "\(probe.stdout)\(probe.stderr)")
            // `logbook status` sees it up too (through that probe: URLSession would refuse the certificate)
            let status = try await stack.logbook("status", "--json")
            let rows = (status.json as? [[String: Any]]) ?? []
            let edge = rows.first { $0["service"] as? String == "logbook-http" }
            #expect(edge?["state"] as? String == "up", "\(status.stdout)\(status.stderr)")
            #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
        }
    }

    @Test("missing, unreadable, lone, garbled or mismatched TLS files stop the edge at start, naming the setting and the file")
    func badSettings() async throws {
        let certs = try await Self.certificates()
        defer { try? FileManager.default.removeItem(atPath: certs) }
        let home = "/tmp/lbtlsh-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        defer { try? FileManager.default.removeItem(atPath: home) }
        let bin = try TestStack.findBinaries()
        let base = ["PATH": "/usr/bin:/bin", "HOME": home, "LOGBOOK_HOME": home, "LOGBOOK_HTTP_LISTEN": "127.0.0.1:0"]
        try "not a certificate\n".write(toFile: certs + "/garbage.pem", atomically: true, encoding: .utf8)

        /// The edge's exit status and what it said, with these settings; it must not be listening.
        func start(_ settings: [String: String]) async throws -> (status: Int32, output: String) {
            let result = try await Tool.run(bin + "/logbook-http", [], environment: base.merging(settings) { $1 }, timeout: .seconds(20))
            return (result.status, result.stdout + result.stderr)
        }
        let cases: [(settings: [String: String], says: [String])] = [
            (["LOGBOOK_HTTP_TLS_CERT": certs + "/missing.pem", "LOGBOOK_HTTP_TLS_KEY": certs + "/key.pem"],
             ["LOGBOOK_HTTP_TLS_CERT", certs + "/missing.pem", "does not exist"]),
            (["LOGBOOK_HTTP_TLS_CERT": certs + "/cert.pem", "LOGBOOK_HTTP_TLS_KEY": certs + "/missing-key.pem"],
             ["LOGBOOK_HTTP_TLS_KEY", certs + "/missing-key.pem", "does not exist"]),
            (["LOGBOOK_HTTP_TLS_CERT": certs + "/cert.pem"], ["LOGBOOK_HTTP_TLS_CERT and LOGBOOK_HTTP_TLS_KEY go together"]),
            (["LOGBOOK_HTTP_TLS_CERT": certs + "/garbage.pem", "LOGBOOK_HTTP_TLS_KEY": certs + "/key.pem"],
             ["LOGBOOK_HTTP_TLS_CERT", certs + "/garbage.pem", "not a PEM certificate"]),
            (["LOGBOOK_HTTP_TLS_CERT": certs + "/cert.pem", "LOGBOOK_HTTP_TLS_KEY": certs + "/cert.pem"],
             ["LOGBOOK_HTTP_TLS_KEY", "not an unencrypted PEM private key"]),
            (["LOGBOOK_HTTP_TLS_CERT": certs + "/cert.pem", "LOGBOOK_HTTP_TLS_KEY": certs + "/other-key.pem"],
             ["LOGBOOK_HTTP_TLS_KEY", certs + "/other-key.pem", "is not the private key of the certificate"]),
        ]
        for (settings, says) in cases {
            let (status, output) = try await start(settings)
            #expect(status == 1, "\(settings): \(output)")
            for words in says { #expect(output.contains(words), "\(settings): \(output)") }
            #expect(!output.contains("listening"), "\(output)")
        }

        // A key its user cannot read: as root the edge runs as nobody (root reads anything).
        chmod(certs + "/key.pem", 0o600)
        let tls = ["LOGBOOK_HTTP_TLS_CERT": certs + "/cert.pem", "LOGBOOK_HTTP_TLS_KEY": certs + "/key.pem"]
        let unreadable: (status: Int32, output: String)
        if getuid() == 0 {
            // a home of nobody's own (the runs above made root's data folder in `home`)
            let nobodyHome = home + "/nobody"
            try FileManager.default.createDirectory(atPath: nobodyHome, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
            chmod(nobodyHome, 0o777)
            let environment = base.merging(tls) { $1 }.merging(["HOME": nobodyHome, "LOGBOOK_HOME": nobodyHome]) { $1 }
                .map { "\($0.key)=\($0.value)" }
            let result = try await Tool.run(
                "/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "/usr/bin/env", "-i"] + environment
                    + [bin + "/logbook-http"], timeout: .seconds(20))
            unreadable = (result.status, result.stdout + result.stderr)
        } else {
            chmod(certs + "/key.pem", 0o000)
            unreadable = try await start(tls)
        }
        #expect(unreadable.status == 1, "\(unreadable.output)")
        #expect(unreadable.output.contains("LOGBOOK_HTTP_TLS_KEY: \(certs)/key.pem cannot be read by this user"), "\(unreadable.output)")
    }
}
