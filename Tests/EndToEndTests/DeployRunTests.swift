// The deployment files' own commands, run for real on this machine: each systemd unit's
// ExecStart with its Environment= (paths moved under a scratch folder) starts its service
// and its ExecStartPost readiness check (`logbook probe … --wait`) passes; each Kubernetes
// StatefulSet's command with its pod environment (the ConfigMap's logbook.conf, a Secret
// from make-secret.sh, the container's env) starts its service, with CURVE on TCP, and its
// readiness probe's command, as rendered, exits 0. What cannot be run here is said where it
// is documented: the units under systemd as PID 1, the pods in a cluster.
import Foundation
import Imaging
import ImagingFixtures
import Testing

/// Processes a test started; all are stopped (SIGTERM, then SIGKILL) when it ends.
final class Started: @unchecked Sendable {
    private var processes: [Process] = []
    private let lock = NSLock()

    /// Returns the process's pid.
    @discardableResult
    func start(_ executable: String, _ arguments: [String], environment: [String: String], log: String) throws -> pid_t {
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        lock.withLock { processes.append(process) }
        return process.processIdentifier
    }

    func stopAll() async {
        let all = lock.withLock { processes }
        for process in all where process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(10)
        while all.contains(where: \.isRunning), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        for process in all where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

@Suite("deployment files, run", .serialized)
struct DeployRunTests {
    /// `Key=value` lines of a unit's [Service] section (Environment= may repeat).
    static func unit(_ service: String) throws -> (environment: [String: String], start: String, post: [String]) {
        let text = try String(contentsOfFile: "\(SystemdTests.unitDirectory)/logbook-\(service).service", encoding: .utf8)
        var environment: [String: String] = [:]
        var start = ""
        var post: [String] = []
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("Environment=") {
                let pair = line.dropFirst("Environment=".count)
                if let equals = pair.firstIndex(of: "=") {
                    environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
                }
            } else if line.hasPrefix("ExecStart=") {
                start = String(line.dropFirst("ExecStart=".count))
            } else if line.hasPrefix("ExecStartPost=") {
                post = line.dropFirst("ExecStartPost=".count).split(separator: " ").map(String.init)
            }
        }
        return (environment, start, post)
    }

    @Test("each systemd unit's ExecStart, with its environment, starts its service, and its ExecStartPost check passes")
    func systemdCommands() async throws {
        let bin = try TestStack.findBinaries()
        let root = "/tmp/lbsd-" + UUID().uuidString.prefix(8).lowercased()
        // what install.sh and systemd provide: the config file, StateDirectory, RuntimeDirectory
        let moved = { (text: String) in
            text.replacingOccurrences(of: "/opt/logbook/bin", with: bin)
                .replacingOccurrences(of: "/var/lib/logbook", with: root + "/var/lib/logbook")
                .replacingOccurrences(of: "/run/logbook", with: root + "/run/logbook")
                .replacingOccurrences(of: "/etc/logbook", with: root + "/etc/logbook")
        }
        for folder in ["/var/lib/logbook", "/run/logbook", "/etc/logbook"] {
            try FileManager.default.createDirectory(
                atPath: root + folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try FileManager.default.copyItem(atPath: Tool.repository + "/deploy/logbook.conf", toPath: root + "/etc/logbook/logbook.conf")
        let started = Started()
        do {
            for service in SystemdTests.services {
                let unit = try Self.unit(service)
                var environment = unit.environment.mapValues(moved).merging(TestStack.offline) { $1 }
                environment["PATH"] = "/usr/bin:/bin"
                try started.start(moved(unit.start), [], environment: environment, log: "\(root)/\(service).log")
                let post = unit.post.map(moved)
                let ready = try await Tool.run(post[0], Array(post.dropFirst()), environment: environment, timeout: .seconds(90))
                #expect(ready.status == 0, "\(service): \(post.joined(separator: " ")): \(ready.stdout)\(ready.stderr)")
                #expect(FileManager.default.fileExists(atPath: "\(root)/var/lib/logbook/data/\(service).sqlite"), "\(service)")
            }
            // The HTTP edge's unit, the services up: its check (its /healthz) passes, and so
            // does the same probe of /readyz (every service answers it). The listen address
            // is the harness's (a free port), not the default 8080.
            let unit = try Self.unit("http")
            var environment = unit.environment.mapValues(moved).merging(TestStack.offline) { $1 }
            environment["PATH"] = "/usr/bin:/bin"
            let post = unit.post.map(moved)
            let early = try await Tool.run(post[0], ["--probe", "--timeout", "0.5"], environment: environment, timeout: .seconds(30))
            #expect(early.status == 7, "no edge yet: \(early.stdout)\(early.stderr)")
            try started.start(moved(unit.start), [], environment: environment, log: "\(root)/http.log")
            let ready = try await Tool.run(post[0], Array(post.dropFirst()), environment: environment, timeout: .seconds(60))
            #expect(ready.status == 0, "http: \(post.joined(separator: " ")): \(ready.stdout)\(ready.stderr)")
            let all = try await Tool.run(post[0], ["--probe", "--path", "/readyz", "--wait", "10"], environment: environment, timeout: .seconds(30))
            #expect(all.status == 0, "/readyz: \(all.stdout)\(all.stderr)")
        } catch {
            await started.stopAll()
            try? FileManager.default.removeItem(atPath: root)
            throw error
        }
        await started.stopAll()
        try? FileManager.default.removeItem(atPath: root)
    }

    @Test("each StatefulSet's command, with its pod's environment, starts its service on TCP with CURVE, and its readiness probe passes")
    func kubernetesCommands() async throws {
        let python = try await KubernetesTests.python()
        let rendered = try await Tool.run(python, [KubernetesTests.directory + "/render.py", "--json", KubernetesTests.overlay])
        try #require(rendered.status == 0, "\(rendered.stderr)")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(rendered.stdout.utf8)) as? [[String: Any]])
        let config = try #require(
            objects.first { $0["kind"] as? String == "ConfigMap" }.flatMap { ($0["data"] as? [String: Any])?["logbook.conf"] as? String })
        let bin = try TestStack.findBinaries()
        let root = "/tmp/lbpod-" + UUID().uuidString.prefix(8).lowercased()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let moved = { (text: String) in
            text.replacingOccurrences(of: "/var/lib/logbook", with: root + "/var/lib/logbook")
                .replacingOccurrences(of: "/run/logbook", with: root + "/run/logbook")
                .replacingOccurrences(of: "/etc/logbook", with: root + "/etc/logbook")
        }
        try FileManager.default.createDirectory(atPath: root + "/etc/logbook", withIntermediateDirectories: true)
        try moved(config).write(toFile: root + "/etc/logbook/logbook.conf", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["LOGBOOK"] = bin + "/logbook"
        let made = try await Tool.run("/bin/bash", [KubernetesTests.directory + "/make-secret.sh"], environment: environment)
        try #require(made.status == 0, "make-secret.sh: \(made.stderr)")
        let secretFile = try KubernetesTests.write(made.stdout)
        defer { unlink(secretFile) }
        let keys = try await Tool.run(
            python, ["-c", "import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1]))['stringData'], sys.stdout)", secretFile])
        let secret = try #require(try JSONSerialization.jsonObject(with: Data(keys.stdout.utf8)) as? [String: String])

        for service in SystemdTests.services {
            let set = try #require(objects.first {
                $0["kind"] as? String == "StatefulSet" && ($0["metadata"] as? [String: Any])?["name"] as? String == service
            })
            let pod = try #require(((set["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
            let container = try #require((pod["containers"] as? [[String: Any]])?.first)
            // the image's ENV (Containerfile), the Secret (envFrom), the container's env
            var env: [String: String] = [
                "PATH": "/usr/bin:/bin", "HOME": root, "LOGBOOK_CONFIG": root + "/etc/logbook/logbook.conf",
                "LOGBOOK_HOME": root + "/var/lib/logbook",
            ].merging(secret) { $1 }.merging(TestStack.offline) { $1 }
            for entry in container["env"] as? [[String: Any]] ?? [] {
                if let name = entry["name"] as? String, let value = entry["value"] as? String { env[name] = moved(value) }
            }
            for mount in container["volumeMounts"] as? [[String: Any]] ?? [] {
                if let path = mount["mountPath"] as? String {
                    try FileManager.default.createDirectory(atPath: moved(path), withIntermediateDirectories: true)
                }
            }
            let command = try #require(container["command"] as? [String])
            let probe = try #require(((container["readinessProbe"] as? [String: Any])?["exec"] as? [String: Any])?["command"] as? [String])
            let started = Started()
            do {
                try started.start(bin + "/" + command[0], Array(command.dropFirst()), environment: env, log: "\(root)/\(service).log")
                // as the kubelet does: the probe's command, every 2 s, until it passes (here at most 20 s)
                let executable = try #require(Tool.find(probe[0]))
                let arguments = Array(probe.dropFirst()).map { $0 == "logbook" ? bin + "/logbook" : $0 }
                var result = CommandResult(status: -1, stdout: "", stderr: "")
                let deadline = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < deadline {
                    result = try await Tool.run(executable, arguments, environment: env, timeout: .seconds(10))
                    if result.status == 0 { break }
                    try await Task.sleep(for: .seconds(1))
                }
                let log = (try? String(contentsOfFile: "\(root)/\(service).log", encoding: .utf8)) ?? ""
                #expect(result.status == 0, "\(service): \(probe.joined(separator: " ")): \(result.stderr)\n\(log)")
                #expect(log.contains("service.curve=on") && log.contains("tcp://0.0.0.0:7100"), "\(service): \(log)")
                #expect(FileManager.default.fileExists(atPath: "\(root)/var/lib/logbook/\(service)/\(service).sqlite"), "\(service)")
            } catch {
                await started.stopAll()
                throw error
            }
            await started.stopAll()
        }
    }

    @Test("the edge's Deployment: its command, with its pod's environment, serves /healthz; /readyz says not ready while no service answers")
    func kubernetesEdge() async throws {
        let python = try await KubernetesTests.python()
        let rendered = try await Tool.run(python, [KubernetesTests.directory + "/render.py", "--json", KubernetesTests.overlay])
        try #require(rendered.status == 0, "\(rendered.stderr)")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(rendered.stdout.utf8)) as? [[String: Any]])
        let config = try #require(
            objects.first { $0["kind"] as? String == "ConfigMap" }.flatMap { ($0["data"] as? [String: Any])?["logbook.conf"] as? String })
        let deployment = try #require(objects.first {
            $0["kind"] as? String == "Deployment" && ($0["metadata"] as? [String: Any])?["name"] as? String == "logbook-http"
        })
        let pod = try #require(((deployment["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        let bin = try TestStack.findBinaries()
        let root = "/tmp/lbedge-" + UUID().uuidString.prefix(8).lowercased()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let moved = { (text: String) in
            text.replacingOccurrences(of: "/var/lib/logbook", with: root + "/var/lib/logbook")
                .replacingOccurrences(of: "/run/logbook", with: root + "/run/logbook")
                .replacingOccurrences(of: "/etc/logbook", with: root + "/etc/logbook")
        }
        try FileManager.default.createDirectory(atPath: root + "/etc/logbook", withIntermediateDirectories: true)
        try moved(config).write(toFile: root + "/etc/logbook/logbook.conf", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["LOGBOOK"] = bin + "/logbook"
        let made = try await Tool.run("/bin/bash", [KubernetesTests.directory + "/make-secret.sh"], environment: environment)
        try #require(made.status == 0, "make-secret.sh: \(made.stderr)")
        let secretFile = try KubernetesTests.write(made.stdout)
        defer { unlink(secretFile) }
        let keys = try await Tool.run(
            python, ["-c", "import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1]))['stringData'], sys.stdout)", secretFile])
        let secret = try #require(try JSONSerialization.jsonObject(with: Data(keys.stdout.utf8)) as? [String: String])
        // the image's ENV (Containerfile), the Secret (envFrom), the container's env; but
        // a free loopback port instead of 0.0.0.0:8080, which this machine may be using
        var env: [String: String] = [
            "PATH": "/usr/bin:/bin", "HOME": root, "LOGBOOK_CONFIG": root + "/etc/logbook/logbook.conf",
            "LOGBOOK_HOME": root + "/var/lib/logbook",
        ].merging(secret) { $1 }
        for entry in container["env"] as? [[String: Any]] ?? [] {
            if let name = entry["name"] as? String, let value = entry["value"] as? String { env[name] = moved(value) }
        }
        #expect(env["LOGBOOK_HTTP_LISTEN"] == "0.0.0.0:8080")
        env["LOGBOOK_HTTP_LISTEN"] = "127.0.0.1:0"
        for mount in container["volumeMounts"] as? [[String: Any]] ?? [] {
            if let path = mount["mountPath"] as? String {
                try FileManager.default.createDirectory(atPath: moved(path), withIntermediateDirectories: true)
            }
        }
        let command = try #require(container["command"] as? [String])
        let containerPath = { (probe: String) in
            ((container[probe] as? [String: Any])?["httpGet"] as? [String: Any])?["path"] as? String ?? "?"
        }
        let started = Started()
        do {
            // Under a soft limit of 512 descriptors (as a shell's or a unit's 1,024 would be
            // too few): the edge raises it to its connections' need (DescriptorLimit.swift).
            let prlimit = try #require(Tool.find("prlimit"), "prlimit (util-linux) is needed")
            let edge = try started.start(
                prlimit, ["--nofile=512:", bin + "/" + command[0]] + Array(command.dropFirst()), environment: env,
                log: "\(root)/http.log")
            // as the kubelet does, the probes' paths over HTTP (here through the edge's own probe)
            let live = try await Tool.run(
                bin + "/logbook-http", ["--probe", "--path", containerPath("livenessProbe"), "--wait", "20"], environment: env,
                timeout: .seconds(40))
            let log = (try? String(contentsOfFile: "\(root)/http.log", encoding: .utf8)) ?? ""
            #expect(live.status == 0, "\(containerPath("livenessProbe")): \(live.stdout)\(live.stderr)\n\(log)")
            let limits = (try? String(contentsOfFile: "/proc/\(edge)/limits", encoding: .utf8)) ?? ""
            let soft = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }?
                .split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first.flatMap { Int($0) }
            #expect(soft.map { $0 >= 2048 + 256 } == true, "the edge's own limit, read from /proc: \(limits)")
            // nothing answers at records-0.records and the others: not ready, so the
            // Service sends the replica no clients
            let ready = try await Tool.run(
                bin + "/logbook-http", ["--probe", "--path", containerPath("readinessProbe"), "--timeout", "5"], environment: env,
                timeout: .seconds(30))
            #expect(ready.status == 7 && ready.stderr.contains("answered 503"), "\(containerPath("readinessProbe")): \(ready.stdout)\(ready.stderr)")
        } catch {
            await started.stopAll()
            throw error
        }
        await started.stopAll()
    }

    /// The device a path is on.
    static func device(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_dev) : nil
    }

    @Test("logbook backup works with the backup CronJob's layout: each database in a folder of its own, the backup on another filesystem")
    func backupWithPodLayout() async throws {
        // The CronJob sees each service's volume at /var/lib/logbook/<service> and writes to
        // a volume of its own: here the databases live in folders of their own (as the
        // ConfigMap's LOGBOOK_<SERVICE>_DATABASE names them) and the backup goes to /dev/shm,
        // a different filesystem, so the copies cannot simply be renamed into place.
        let volumes = "/tmp/lbvol-" + UUID().uuidString.prefix(8).lowercased()
        let target = "/dev/shm/lbbackup-" + UUID().uuidString.prefix(8).lowercased()
        defer {
            try? FileManager.default.removeItem(atPath: volumes)
            try? FileManager.default.removeItem(atPath: target)
        }
        try FileManager.default.createDirectory(atPath: volumes, withIntermediateDirectories: true)
        let volumeDevice = try #require(Self.device(volumes))
        let targetDevice = try #require(Self.device("/dev/shm"), "no /dev/shm to back up onto")
        #expect(volumeDevice != targetDevice, "/dev/shm is on the same filesystem as /tmp")
        var environment: [String: String] = [:]
        for service in SystemdTests.services {
            let name = MultiHostTests.setting(service)
            try FileManager.default.createDirectory(atPath: "\(volumes)/\(service)", withIntermediateDirectories: true)
            environment["LOGBOOK_\(name)_DATABASE"] = "\(volumes)/\(service)/\(service).sqlite"
        }
        environment["LOGBOOK_RECORDS_PHOTO_DIR"] = "\(volumes)/records/records-photos"
        try await withStack(environment: environment) { stack in
            try await stack.upAndRegister("alice")
            for index in 0..<5 {
                let add = try await stack.logbook("expense", "add", "e\(index)", "2.50")
                try #require(add.status == 0, "\(add.stderr)")
            }
            // a photo, so records' photo folder goes into the backup and comes back
            let jpeg = try await Imaging.run { () throws(ImagingError) in try Imaging.testImage(width: 600, height: 400) }
            try jpeg.write(to: URL(fileURLWithPath: stack.home + "/pike.jpg"))
            let caught = try await stack.logbook(
                "catch", "add", "--species", "Pike", "--weight", "3.1", "--bait", "spoon", "--water", "fresh", "--lat", "59.3", "--lon", "18.1",
                "--photo", stack.home + "/pike.jpg", "--json")
            try #require(caught.status == 0, "\(caught.stderr)")
            let catchId = try #require(caught.object["id"] as? String)
            let backup = try await stack.logbook("backup", target, "--json")
            try #require(backup.status == 0, "logbook backup: \(backup.stdout)\(backup.stderr)")
            let services = (backup.object["services"] as? [[String: Any]]) ?? []
            #expect(Set(services.compactMap { $0["service"] as? String }) == Set(SystemdTests.services))
            for service in services {
                let name = service["service"] as? String ?? "?"
                let database = service["database"] as? String ?? "?"
                #expect(FileManager.default.fileExists(atPath: "\(target)/\(database)"), "\(name): \(database) not in \(target)")
            }
            #expect(FileManager.default.fileExists(atPath: target + "/logbook-backup.json"))
            // nothing left behind on the services' volumes
            for service in SystemdTests.services {
                let left = (try? FileManager.default.contentsOfDirectory(atPath: "\(volumes)/\(service)")) ?? []
                #expect(!left.contains { $0.hasPrefix("backup-") }, "\(service) volume still holds \(left)")
            }

            // Restored with the same layout: the files it replaces are kept on each service's
            // own volume (not in a data directory no volume covers), and the stack comes back.
            try #require(try await stack.logbook("expense", "add", "after the backup", "9").status == 0)
            #expect(try await stack.logbook("stack", "down").status == 0)
            let restore = try await stack.logbook("restore", target, "--json")
            try #require(restore.status == 0, "logbook restore: \(restore.stdout)\(restore.stderr)")
            let asides = (restore.object["movedAsideAll"] as? [String]) ?? []
            #expect(asides.count == SystemdTests.services.count, "\(restore.stdout)")
            for service in SystemdTests.services {
                let kept = (try? FileManager.default.contentsOfDirectory(atPath: "\(volumes)/\(service)")) ?? []
                let aside = kept.first { $0.hasPrefix("before-restore-") }
                #expect(aside != nil, "\(service) volume holds \(kept)")
                if let aside {
                    #expect(FileManager.default.fileExists(atPath: "\(volumes)/\(service)/\(aside)/\(service).sqlite"))
                }
            }
            #expect(!FileManager.default.fileExists(atPath: stack.home + "/data/" + (asides.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "x")))
            try #require(try await stack.logbook("stack", "up").status == 0)
            let list = try await stack.logbook("expense", "list", "--json")
            let items = list.object["items"] as? [[String: Any]] ?? []
            #expect(items.count == 5, "the backup's five expenses, not the one after it: \(list.stdout)")
            // the photo folder was put back whole, by a rename, and the photo answers
            let records = (try? FileManager.default.contentsOfDirectory(atPath: "\(volumes)/records")) ?? []
            #expect(!records.contains { $0.hasSuffix(".restoring") }, "\(records)")
            let back = stack.home + "/back.jpg"
            let fetched = try await stack.logbook("catch", "photo", catchId, "-o", back)
            #expect(fetched.status == 0 && FileManager.default.contents(atPath: back) == jpeg, "\(fetched.stderr)")
        }
    }
}
