// 405 Method Not Allowed: a path the edge answers, asked with a method it does not answer
// there. The router only says "no route" (404) for both; this decides which it was, from
// the same route table the router registers (Routes.all and Routes.own), matching a path
// as the router does: a literal segment wins over a `{parameter}` at the same place
// (`/v1/catches/bests` is not `/v1/catches/{id}`).
public enum AllowedMethods {
    private struct Template {
        var path: String
        /// nil for a parameter segment.
        var segments: [Substring?]
        var methods: [String]
    }

    private static let templates: [Template] = {
        var methods: [String: [String]] = [:]
        var order: [String] = []
        for (method, path) in Routes.all.map({ ($0.method.rawValue, $0.path) }) + Routes.own.map({ ($0.method.rawValue, $0.path) }) {
            if methods[path] == nil { order.append(path) }
            methods[path, default: []].append(method)
        }
        return order.map { path in
            Template(
                path: path,
                segments: path.split(separator: "/").map { $0.hasPrefix("{") ? nil : $0 },
                methods: Route.Method.allCases.map(\.rawValue).filter { methods[path]!.contains($0) })
        }
    }()

    /// The methods the path answers (in a fixed order), or nil when no route has this path.
    public static func methods(for path: String) -> [String]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var best: (template: Template, literals: [Bool])?
        for template in templates where template.segments.count == segments.count {
            guard zip(template.segments, segments).allSatisfy({ $0.0 == nil || $0.0 == $0.1 }) else { continue }
            let literals = template.segments.map { $0 != nil }
            // The router's choice: the first segment where two candidates differ decides,
            // the literal one winning.
            if let current = best, !current.literals.lexicographicallyPrecedes(literals, by: { !$0 && $1 }) { continue }
            best = (template, literals)
        }
        return best?.template.methods
    }
}
