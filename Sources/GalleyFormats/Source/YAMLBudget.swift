import Yams

/// Composes YAML with a bound on what its aliases expand to. Yams shares an anchored node
/// between its aliases, so composing is linear, but every walk of the tree (reading fields,
/// converting metadata to JSON) visits each alias in full: nine levels of nine aliases (the
/// "billion laughs") are 387 million nodes from 400 bytes. The tree is walked once here, counting
/// nodes and depth, and refused the moment either bound is passed: milliseconds and no memory,
/// whatever the text. Used for issue sources and `.galley.yml`.
package enum YAMLBudget {
    /// More nodes than any issue.yaml, front matter or configuration holds (the largest issue
    /// sources seen hold a few thousand).
    package static let maxNodes = 100_000
    /// Deeper than any field Galley reads (metadata objects nest a few levels).
    package static let maxDepth = 64

    /// Why a tree was refused, and the node where the walk stopped.
    package struct Exceeded: Error {
        package var reason: String
        package var mark: Mark?
    }

    /// `Yams.compose`, then the bounded walk. The encoding is named: Yams's default reads the
    /// whole process environment on every parse (its `YAMS_DEFAULT_ENCODING`, which would also
    /// make it print to standard output): 4% of packing 30,000 articles.
    ///
    /// The resolver is `.basic` (every untagged scalar is text): Galley reads a scalar's type
    /// from its text (`Node.bool`, `.int`, `.null` look at the text and explicit tags only), and
    /// the resolved tag is used only by Yams's own duplicate-key check, which with `.default`
    /// ran seven ICU regular expressions on every mapping key: 5% of packing 30,000 articles.
    /// One consequence, wanted: `1:` and `"1":` in one mapping are the same key to Galley, so
    /// they are now refused as a duplicate instead of the second being silently ignored.
    package static func compose(_ text: String) throws -> Node? {
        guard let node = try Yams.compose(yaml: text, .basic, .default, .utf8) else { return nil }
        try check(node)
        return node
    }

    /// `100000` as `100,000`, as the message is read (no locale: messages are English).
    static func grouped(_ number: Int) -> String {
        var digits = String(number)
        var groups: [Substring] = []
        while digits.count > 3 {
            groups.insert(digits.suffix(3), at: 0)
            digits.removeLast(3)
        }
        return ([Substring(digits)] + groups).joined(separator: ",")
    }

    package static func check(_ root: Node, maxNodes: Int = maxNodes, maxDepth: Int = maxDepth) throws(Exceeded) {
        var count = 0
        // An explicit stack: the walk itself must not recurse past the bound.
        var stack: [(Node, Int)] = [(root, 1)]
        while let (node, depth) = stack.popLast() {
            count += 1
            if count > maxNodes {
                throw Exceeded(reason: "holds more than \(Self.grouped(maxNodes)) keys, values and list items (an alias counts as everything it names, each time it is used)", mark: node.mark)
            }
            if depth > maxDepth {
                throw Exceeded(reason: "nests deeper than \(maxDepth) levels", mark: node.mark)
            }
            switch node {
            case .mapping(let mapping):
                for (key, value) in mapping {
                    stack.append((key, depth + 1))
                    stack.append((value, depth + 1))
                }
            case .sequence(let sequence):
                for item in sequence { stack.append((item, depth + 1)) }
            case .scalar, .alias:
                break
            }
        }
    }
}
