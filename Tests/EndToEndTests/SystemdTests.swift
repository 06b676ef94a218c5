// deploy/systemd/: every unit passes `systemd-analyze verify`, and `logbook probe` (the
// units' readiness check, and Kubernetes' probes) answers 0 for a running service and 7
// for one that is not.
//
// How the units are verified: `systemd-analyze verify --root=ROOT` checks each unit as
// installed under ROOT, including that every ExecStart=/ExecStartPost= binary exists and is
// executable there. ROOT is a scratch directory into which deploy/systemd/install.sh
// --root installs this build (the unit files unchanged, the binaries at /opt/logbook/bin,
// the user, the config file, the enable links); it first gets a copy of the host's own
// units (usr/lib/systemd/system) so the default dependencies (sysinit.target, …) resolve.
// Any warning about one of our units fails the test too.
import Foundation
import Testing

@Suite("systemd units and logbook probe", .serialized)
struct SystemdTests {
    static let services = ["auth", "records", "weather-fetcher", "analytics", "store"]
    static var unitDirectory: String { Tool.repository + "/deploy/systemd" }

    @Test("every unit in deploy/systemd passes systemd-analyze verify")
    func unitsVerify() async throws {
        // the test command (deploy/test.sh) installs systemd's tools where they are missing
        let analyze = try #require(
            Tool.find("systemd-analyze"), "systemd-analyze is not installed (deploy/test.sh installs the systemd package)")
        let units = try FileManager.default.contentsOfDirectory(atPath: Self.unitDirectory)
            .filter { $0.hasSuffix(".service") || $0.hasSuffix(".target") }.sorted()
        #expect(Set(units) == Set(Self.services.map { "logbook-\($0).service" } + ["logbook-http.service", "logbook.target"]))

        let bin = try TestStack.findBinaries()
        let root = "/tmp/lbsdroot-" + UUID().uuidString.prefix(8).lowercased()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/etc", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/usr/lib/systemd", withIntermediateDirectories: true)
        if fm.fileExists(atPath: "/usr/lib/systemd/system") {
            try fm.copyItem(atPath: "/usr/lib/systemd/system", toPath: root + "/usr/lib/systemd/system")
        }
        // the real installer, into the scratch root
        let install = try await Tool.run("/bin/bash", [Self.unitDirectory + "/install.sh", "--bin", bin, "--root", root])
        try #require(install.status == 0, "install.sh --root: \(install.stdout)\(install.stderr)")
        for service in Self.services {
            #expect(fm.isExecutableFile(atPath: root + "/opt/logbook/bin/" + service), "\(service) not installed")
            // enable links name the unit as the installed system sees it (inside the root)
            let link = try? fm.destinationOfSymbolicLink(atPath: root + "/etc/systemd/system/logbook.target.wants/logbook-\(service).service")
            #expect(link == "/etc/systemd/system/logbook-\(service).service", "\(service) not enabled")
        }
        // the HTTP edge: installed by default beside the five, enabled in the target
        #expect(fm.isExecutableFile(atPath: root + "/opt/logbook/bin/logbook-http"), "logbook-http not installed")
        #expect(
            (try? fm.destinationOfSymbolicLink(atPath: root + "/etc/systemd/system/logbook.target.wants/logbook-http.service"))
                == "/etc/systemd/system/logbook-http.service", "logbook-http not enabled")
        #expect(
            (try? fm.destinationOfSymbolicLink(atPath: root + "/etc/systemd/system/multi-user.target.wants/logbook.target"))
                == "/etc/systemd/system/logbook.target")
        let passwd = (try? String(contentsOfFile: root + "/etc/passwd", encoding: .utf8)) ?? ""
        #expect(passwd.contains("logbook:x:"), "no logbook user: \(passwd)")
        let mode = (try fm.attributesOfItem(atPath: root + "/etc/logbook/logbook.conf")[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o640, "logbook.conf mode \(String(mode ?? 0, radix: 8))")

        let result = try await Tool.run(
            analyze, ["verify", "--root=" + root] + units.map { root + "/etc/systemd/system/" + $0 })
        let ours = (result.stdout + result.stderr).split(separator: "\n").filter { $0.contains("logbook") }
        #expect(result.status == 0, "systemd-analyze verify: \(result.stdout)\(result.stderr)")
        #expect(ours.isEmpty, "systemd-analyze warns about our units: \(ours.joined(separator: "\n"))")

        // The check can fail: the same verify on a unit whose ExecStart binary is missing.
        try fm.removeItem(atPath: root + "/opt/logbook/bin/records")
        let missing = try await Tool.run(analyze, ["verify", "--root=" + root, root + "/etc/systemd/system/logbook-records.service"])
        #expect(missing.status != 0, "verify passed without the records binary: \(missing.stderr)")
        #expect(missing.stderr.contains("/opt/logbook/bin/records"), "\(missing.stderr)")
        // and for the edge's unit, whose readiness check is the edge's own binary
        try fm.removeItem(atPath: root + "/opt/logbook/bin/logbook-http")
        let noEdge = try await Tool.run(analyze, ["verify", "--root=" + root, root + "/etc/systemd/system/logbook-http.service"])
        #expect(noEdge.status != 0 && noEdge.stderr.contains("/opt/logbook/bin/logbook-http"), "\(noEdge.stderr)")
    }

    @Test("each unit runs its own service, reads /etc/logbook/logbook.conf and probes it with logbook probe")
    func unitsAreConsistent() throws {
        for service in Self.services {
            let text = try String(contentsOfFile: "\(Self.unitDirectory)/logbook-\(service).service", encoding: .utf8)
            let lines = Set(text.split(separator: "\n").map(String.init))
            #expect(lines.contains("ExecStart=/opt/logbook/bin/\(service)"), "\(service)")
            #expect(lines.contains("ExecStartPost=/opt/logbook/bin/logbook probe \(service) --timeout 1 --wait 60"), "\(service)")
            #expect(lines.contains("Environment=LOGBOOK_CONFIG=/etc/logbook/logbook.conf"), "\(service)")
            for hardening in [
                "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes", "StateDirectory=logbook",
                "Restart=on-failure", "User=logbook", "WantedBy=logbook.target", "PartOf=logbook.target",
            ] {
                #expect(lines.contains(hardening), "logbook-\(service).service lacks \(hardening)")
            }
        }
    }

    @Test("the HTTP edge's unit runs logbook-http with the services' hardening and checks its /healthz")
    func edgeUnit() throws {
        let text = try String(contentsOfFile: "\(Self.unitDirectory)/logbook-http.service", encoding: .utf8)
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.contains("ExecStart=/opt/logbook/bin/logbook-http"))
        #expect(lines.contains("ExecStartPost=/opt/logbook/bin/logbook-http --probe --path /healthz --timeout 1 --wait 30"))
        #expect(lines.contains("Environment=LOGBOOK_CONFIG=/etc/logbook/logbook.conf"))
        // the same hardening, line for line, as a service's unit
        let service = try String(contentsOfFile: "\(Self.unitDirectory)/logbook-records.service", encoding: .utf8)
        let hardening = service.components(separatedBy: "# Hardening")[1].components(separatedBy: "[Install]")[0]
            .split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && $0.contains("=") }
        #expect(hardening.count >= 20, "\(hardening)")
        for line in hardening + ["User=logbook", "Restart=on-failure", "WantedBy=logbook.target", "PartOf=logbook.target", "StateDirectory=logbook"] {
            #expect(lines.contains(line), "logbook-http.service lacks \(line)")
        }
    }

    @Test("logbook probe: 0 when the service answers $srv.ping, 7 when it does not, 2 for no such service")
    func probe() async throws {
        try await withStack { stack in
            let clock = ContinuousClock()
            // nothing runs: 7 at once (no socket), with a reason
            let before = try await stack.logbook("probe", "records", "--timeout", "1")
            #expect(before.status == 7, "\(before.stdout)\(before.stderr)")
            #expect(before.stderr.contains("records"), "\(before.stderr)")

            let up = try await stack.logbook("stack", "up")
            try #require(up.status == 0, "\(up.stderr)")
            for service in Self.services {
                let probe = try await stack.logbook("probe", service, "--timeout", "2", "--json")
                #expect(probe.status == 0, "\(service): \(probe.stderr)")
                #expect(probe.object["service"] as? String == service)
                #expect(probe.object["ok"] as? Bool == true)
            }
            let unknown = try await stack.logbook("probe", "nosuch")
            #expect(unknown.status == 2, "\(unknown.stderr)")

            // a stopped (SIGSTOP) service holds its socket but answers nothing: 7 after the deadline
            let pid = try #require(stack.pid("analytics"))
            kill(pid, SIGSTOP)
            defer { kill(pid, SIGCONT) }
            let start = clock.now
            let hung = try await stack.logbook("probe", "analytics", "--timeout", "1")
            let took = clock.now - start
            kill(pid, SIGCONT)
            #expect(hung.status == 7, "\(hung.stdout)\(hung.stderr)")
            #expect(took < .seconds(5), "probe took \(took) with --timeout 1")

            // --wait: a service that comes back within the wait is reported ready
            kill(pid, SIGSTOP)
            Task {
                try? await Task.sleep(for: .milliseconds(1500))
                kill(pid, SIGCONT)
            }
            let waited = try await stack.logbook("probe", "analytics", "--timeout", "0.5", "--wait", "10")
            #expect(waited.status == 0, "\(waited.stderr)")
        }
    }
}
