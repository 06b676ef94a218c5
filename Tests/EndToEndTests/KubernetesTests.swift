// deploy/kubernetes/: the example overlay renders, every object validates against the
// Kubernetes schemas of a pinned version (1.33, strict: unknown fields fail), and the
// objects hold what docs/operations.md promises (one replica and a volume per service,
// headless Services, probes through `logbook probe`, limits, the NetworkPolicy, the backup).
//
// Rendering: deploy/kubernetes/render.py (Python with PyYAML, the kustomize features the
// files use). Where a `kubectl` with kustomize is installed, the test also renders with
// `kubectl kustomize` and requires the same objects. Validation: the `kubernetes-validate`
// package from PyPI, which ships the schemas (no network needed). deploy/test.sh installs
// both into .build/deploy-venv; LOGBOOK_DEPLOY_PYTHON names another interpreter.
import Foundation
import Testing

@Suite("Kubernetes manifests", .serialized)
struct KubernetesTests {
    static let kubernetesVersion = "1.33.0"
    static let services = SystemdTests.services
    static var directory: String { Tool.repository + "/deploy/kubernetes" }
    static var overlay: String { directory + "/overlays/example" }

    /// A Python with PyYAML and kubernetes_validate.
    static func python() async throws -> String {
        var candidates: [String] = []
        if let named = ProcessInfo.processInfo.environment["LOGBOOK_DEPLOY_PYTHON"] { candidates.append(named) }
        candidates.append(Tool.repository + "/.build/deploy-venv/bin/python3")
        if let system = Tool.find("python3") { candidates.append(system) }
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            let check = try await Tool.run(candidate, ["-c", "import yaml, kubernetes_validate"])
            if check.status == 0 { return candidate }
        }
        throw HarnessError(
            "no python3 with PyYAML and kubernetes-validate (tried \(candidates)); deploy/test.sh installs them in .build/deploy-venv")
    }

    static func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/lbk8s-" + UUID().uuidString.prefix(8) + ".yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("the overlay renders and every object validates against the pinned Kubernetes schemas (1.33)")
    func validates() async throws {
        let python = try await Self.python()
        let rendered = try await Tool.run(python, [Self.directory + "/render.py", Self.overlay])
        try #require(rendered.status == 0, "render.py: \(rendered.stderr)")
        let file = try Self.write(rendered.stdout)
        defer { unlink(file) }
        let validate = try await Tool.run(
            python, ["-m", "kubernetes_validate", "--strict", "-k", Self.kubernetesVersion, file])
        #expect(validate.status == 0, "kubernetes-validate: \(validate.stdout)\(validate.stderr)")
        let objects = rendered.stdout.components(separatedBy: "\n---\n").count
        let passed = (validate.stdout + validate.stderr).components(separatedBy: " passed for resource ").count - 1
        #expect(passed == objects && objects >= 16, "\(passed) of \(objects) objects passed: \(validate.stdout)\(validate.stderr)")

        // The validation can fail: a StatefulSet with a misspelt field and a wrong type.
        let broken = rendered.stdout.replacingOccurrences(of: "  replicas: 1\n", with: "  replicas: one\n  replica: 1\n")
        #expect(broken != rendered.stdout)
        let brokenFile = try Self.write(broken)
        defer { unlink(brokenFile) }
        let refused = try await Tool.run(
            python, ["-m", "kubernetes_validate", "--strict", "-k", Self.kubernetesVersion, brokenFile])
        #expect(refused.status != 0, "a broken StatefulSet validated: \(refused.stdout)")
    }

    /// A kubectl whose `kustomize` renders the overlay (Debian's 1.20 cannot: too old).
    static let kubectl: String? = {
        guard let kubectl = Tool.find("kubectl") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: kubectl)
        process.arguments = ["kustomize", overlay]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        return process.terminationStatus == 0 ? kubectl : nil
    }()

    // Reported as skipped, with this reason, on a machine without a current kubectl; the
    // other tests render (render.py) and validate either way.
    @Test(
        "kubectl kustomize renders the same objects as render.py",
        .enabled(if: kubectl != nil, "no kubectl whose kustomize renders the overlay is installed"))
    func sameAsKustomize() async throws {
        let python = try await Self.python()
        let kubectl = try #require(Self.kubectl)
        let ours = try await Tool.run(python, [Self.directory + "/render.py", "--json", Self.overlay])
        try #require(ours.status == 0, "\(ours.stderr)")
        let theirs = try await Tool.run(kubectl, ["kustomize", Self.overlay])
        try #require(theirs.status == 0, "kubectl kustomize: \(theirs.stderr)")
        let theirsFile = try Self.write(theirs.stdout)
        defer { unlink(theirsFile) }
        let converted = try await Tool.run(
            python, ["-c", "import json,sys,yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)", theirsFile])
        try #require(converted.status == 0, "\(converted.stderr)")
        let key = { (object: [String: Any]) -> String in
            "\(object["kind"] ?? "")/\((object["metadata"] as? [String: Any])?["name"] ?? "")"
        }
        let a = try #require(try JSONSerialization.jsonObject(with: Data(ours.stdout.utf8)) as? [[String: Any]])
        let b = try #require(try JSONSerialization.jsonObject(with: Data(converted.stdout.utf8)) as? [[String: Any]])
        #expect(Set(a.map(key)) == Set(b.map(key)))
        for object in a {
            let other = b.first { key($0) == key(object) }
            #expect(other.map { NSDictionary(dictionary: $0).isEqual(to: object) } == true, "\(key(object)) differs")
        }
    }

    @Test("one single-replica StatefulSet with its own volume per service, headless Services, probes, limits, policy, backup")
    func holdsWhatTheDocsSay() async throws {
        let python = try await Self.python()
        let rendered = try await Tool.run(python, [Self.directory + "/render.py", "--json", Self.overlay])
        try #require(rendered.status == 0, "\(rendered.stderr)")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(rendered.stdout.utf8)) as? [[String: Any]])
        func find(_ kind: String, _ name: String) -> [String: Any]? {
            objects.first { $0["kind"] as? String == kind && ($0["metadata"] as? [String: Any])?["name"] as? String == name }
        }
        func dig(_ value: Any?, _ path: String...) -> Any? {
            var current = value
            for part in path {
                if let index = Int(part) { current = (current as? [Any]).flatMap { index < $0.count ? $0[index] : nil } }
                else { current = (current as? [String: Any])?[part] }
            }
            return current
        }
        for object in objects where object["kind"] as? String != "Namespace" {
            #expect(dig(object, "metadata", "namespace") as? String == "logbook", "\(object["kind"] ?? "")")
        }
        #expect(objects.filter { $0["kind"] as? String == "StatefulSet" }.count == Self.services.count)
        for service in Self.services {
            let set = try #require(find("StatefulSet", service), "no StatefulSet \(service)")
            #expect(dig(set, "spec", "replicas") as? Int == 1, "\(service)")
            #expect(dig(set, "spec", "serviceName") as? String == service)
            #expect(dig(set, "spec", "volumeClaimTemplates", "0", "metadata", "name") as? String == "data")
            let container = try #require(dig(set, "spec", "template", "spec", "containers", "0") as? [String: Any])
            #expect(container["command"] as? [String] == [service])
            #expect(container["image"] as? String == "registry.example.org/logbook:1.0")
            for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
                let command = dig(container, probe, "exec", "command") as? [String] ?? []
                #expect(command.contains("logbook") && command.contains("probe") && command.contains(service), "\(service) \(probe)")
            }
            #expect(dig(container, "resources", "requests", "memory") != nil && dig(container, "resources", "limits", "memory") != nil)
            let mounts = (container["volumeMounts"] as? [[String: Any]]) ?? []
            #expect(mounts.contains { $0["name"] as? String == "data" && $0["mountPath"] as? String == "/var/lib/logbook/\(service)" })
            #expect(dig(container, "securityContext", "readOnlyRootFilesystem") as? Bool == true)
            let headless = try #require(find("Service", service), "no Service \(service)")
            #expect(dig(headless, "spec", "clusterIP") as? String == "None")
            let ports = (dig(headless, "spec", "ports") as? [[String: Any]] ?? []).compactMap { $0["port"] as? Int }
            #expect(Set(ports) == [7100, 7101])
        }
        let policy = try #require(find("NetworkPolicy", "logbook-stack-only"))
        #expect(dig(policy, "spec", "podSelector", "matchLabels", "app.kubernetes.io/part-of") as? String == "logbook")
        #expect(dig(policy, "spec", "ingress", "0", "from", "0", "podSelector", "matchLabels", "app.kubernetes.io/part-of") as? String == "logbook")
        let backup = try #require(find("CronJob", "logbook-backup"))
        let command = (dig(backup, "spec", "jobTemplate", "spec", "template", "spec", "containers", "0", "command") as? [String] ?? [])
            .joined(separator: " ")
        #expect(command.contains("logbook backup \"/backup/logbook-"), "\(command)")
        let claims = (dig(backup, "spec", "jobTemplate", "spec", "template", "spec", "volumes") as? [[String: Any]] ?? [])
            .compactMap { dig($0, "persistentVolumeClaim", "claimName") as? String }
        #expect(Set(claims) == Set(Self.services.map { "data-\($0)-0" } + ["logbook-backups"]))
        let secret = try #require(find("Secret", "logbook-keys"))
        #expect(Set((secret["stringData"] as? [String: Any] ?? [:]).keys)
            == ["LOGBOOK_CURVE_PUBLIC_KEY", "LOGBOOK_CURVE_SECRET_KEY", "LOGBOOK_CURVE_ALLOW", "LOGBOOK_STACK_KEY"])
    }

    @Test("the HTTP edge: a Deployment with HTTP probes on /healthz and /readyz, its Service, a NetworkPolicy for its door and its calls")
    func edge() async throws {
        let python = try await Self.python()
        let rendered = try await Tool.run(python, [Self.directory + "/render.py", "--json", Self.overlay])
        try #require(rendered.status == 0, "\(rendered.stderr)")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(rendered.stdout.utf8)) as? [[String: Any]])
        func find(_ kind: String, _ name: String) -> [String: Any]? {
            objects.first { $0["kind"] as? String == kind && ($0["metadata"] as? [String: Any])?["name"] as? String == name }
        }
        func dig(_ value: Any?, _ path: String...) -> Any? {
            var current = value
            for part in path {
                if let index = Int(part) { current = (current as? [Any]).flatMap { index < $0.count ? $0[index] : nil } }
                else { current = (current as? [String: Any])?[part] }
            }
            return current
        }
        // stateless: a Deployment, no volume claim, no StatefulSet
        let deployment = try #require(find("Deployment", "logbook-http"), "no Deployment logbook-http")
        #expect(find("StatefulSet", "logbook-http") == nil)
        #expect((dig(deployment, "spec", "replicas") as? Int ?? 0) >= 1)
        #expect(dig(deployment, "metadata", "namespace") as? String == "logbook")
        let container = try #require(dig(deployment, "spec", "template", "spec", "containers", "0") as? [String: Any])
        #expect(container["command"] as? [String] == ["logbook-http"])
        #expect(container["image"] as? String == "registry.example.org/logbook:1.0")
        let env = (container["env"] as? [[String: Any]] ?? []).reduce(into: [String: String]()) { $0[$1["name"] as? String ?? ""] = $1["value"] as? String }
        #expect(env["LOGBOOK_HTTP_LISTEN"] == "0.0.0.0:8080")
        #expect(dig(container, "ports", "0", "containerPort") as? Int == 8080)
        #expect(dig(container, "envFrom", "0", "secretRef", "name") as? String == "logbook-keys", "the edge is a CURVE client of the stack")
        for (probe, path) in [("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
            #expect(dig(container, probe, "httpGet", "path") as? String == path, "\(probe)")
            #expect(dig(container, probe, "httpGet", "port") as? String == "http", "\(probe)")
        }
        #expect(dig(container, "securityContext", "readOnlyRootFilesystem") as? Bool == true)
        #expect(dig(container, "resources", "limits", "memory") != nil)
        #expect(dig(deployment, "spec", "template", "spec", "securityContext", "runAsNonRoot") as? Bool == true)
        #expect(dig(deployment, "spec", "template", "spec", "volumes").map { ($0 as? [[String: Any]] ?? []).allSatisfy { $0["persistentVolumeClaim"] == nil } } == true)
        // its Service reaches the pods' named port
        let service = try #require(find("Service", "logbook-http"))
        #expect(dig(service, "spec", "selector", "app.kubernetes.io/name") as? String == "logbook-http")
        #expect(dig(service, "spec", "ports", "0", "targetPort") as? String == "http")
        // its NetworkPolicy: clients in on 8080; out only to the stack's request sockets and DNS
        let policy = try #require(find("NetworkPolicy", "logbook-http"))
        #expect(dig(policy, "spec", "podSelector", "matchLabels", "app.kubernetes.io/name") as? String == "logbook-http")
        #expect(Set(dig(policy, "spec", "policyTypes") as? [String] ?? []) == ["Ingress", "Egress"])
        #expect(dig(policy, "spec", "ingress", "0", "ports", "0", "port") as? Int == 8080)
        #expect(dig(policy, "spec", "egress", "0", "to", "0", "podSelector", "matchLabels", "app.kubernetes.io/part-of") as? String == "logbook")
        #expect(dig(policy, "spec", "egress", "0", "ports", "0", "port") as? Int == 7100)
        let dns = (dig(policy, "spec", "egress", "1", "ports") as? [[String: Any]] ?? []).compactMap { $0["port"] as? Int }
        #expect(dns == [53, 53])
        // the image carries the edge
        let containerfile = try String(contentsOfFile: Self.directory + "/Containerfile", encoding: .utf8)
        #expect(containerfile.contains("analytics store logbook-http; do"))
    }

    @Test("the ConfigMap's logbook.conf and a Secret from make-secret.sh are accepted by the real configuration loader")
    func configurationLoads() async throws {
        let python = try await Self.python()
        let rendered = try await Tool.run(python, [Self.directory + "/render.py", "--json", Self.overlay])
        try #require(rendered.status == 0, "\(rendered.stderr)")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(rendered.stdout.utf8)) as? [[String: Any]])
        let config = try #require(
            objects.first { $0["kind"] as? String == "ConfigMap" }.flatMap { ($0["data"] as? [String: Any])?["logbook.conf"] as? String })
        let bin = try TestStack.findBinaries()
        let home = "/tmp/lbk-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try config.write(toFile: home + "/logbook.conf", atomically: true, encoding: .utf8)

        // make-secret.sh with this build's logbook: a Secret holding a real keypair
        var environment = ProcessInfo.processInfo.environment
        environment["LOGBOOK"] = bin + "/logbook"
        let made = try await Tool.run("/bin/bash", [Self.directory + "/make-secret.sh"], environment: environment)
        try #require(made.status == 0, "make-secret.sh: \(made.stderr)")
        let secretFile = try Self.write(made.stdout)
        defer { unlink(secretFile) }
        let valid = try await Tool.run(python, ["-m", "kubernetes_validate", "--strict", "-k", Self.kubernetesVersion, secretFile])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
        let keys = try await Tool.run(
            python, ["-c", "import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1]))['stringData'], sys.stdout)", secretFile])
        let values = try #require(try JSONSerialization.jsonObject(with: Data(keys.stdout.utf8)) as? [String: String])
        #expect(values["LOGBOOK_CURVE_PUBLIC_KEY"]?.count == 40 && values["LOGBOOK_CURVE_SECRET_KEY"]?.count == 40)
        #expect(values["LOGBOOK_CURVE_ALLOW"] == values["LOGBOOK_CURVE_PUBLIC_KEY"])

        // A pod's view: the ConfigMap's file, the Secret's keys in the environment. The
        // configuration loads (a bad one exits 5, naming the setting); nothing listens at
        // records-0.records, so the probe says unavailable (7).
        var pod = values
        pod["PATH"] = "/usr/bin:/bin"
        pod["HOME"] = home
        pod["LOGBOOK_HOME"] = home
        pod["LOGBOOK_CONFIG"] = home + "/logbook.conf"
        pod["LOGBOOK_CONFIG_DIR"] = home + "/cli"
        let probe = try await Tool.run(bin + "/logbook", ["probe", "records", "--timeout", "0.5"], environment: pod)
        #expect(probe.status == 7, "\(probe.stdout)\(probe.stderr)")
        // and the placeholders in the committed example Secret are refused with a reason
        pod["LOGBOOK_CURVE_SECRET_KEY"] = "replace-with-make-secret.sh"
        let placeholder = try await Tool.run(bin + "/logbook", ["probe", "records", "--timeout", "0.5"], environment: pod)
        #expect(placeholder.status != 0 && placeholder.status != 7, "\(placeholder.stdout)\(placeholder.stderr)")
        #expect(placeholder.stderr.contains("LOGBOOK_CURVE_SECRET_KEY"), "\(placeholder.stderr)")
    }
}
