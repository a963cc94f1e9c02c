import Foundation
import GalleyCore

/// The checks of a streamed latest.json that read only one article's body (its placeholders
/// and local references, and libxml2's judgement of its HTML), on a thread of their own: at
/// 30,000 articles they were 40% of the manifest's checks and depend on nothing else, so they
/// run beside the JSON reading and the other article checks. Bodies wait in a short queue
/// (memory stays that of a few articles); `finish` hands back, in article order, what the one
/// thread would have added: findings (for `Findings.insert`, at the place each article's came)
/// and the index's placeholders and body files (`merge`).
final class BodyCheckThread: @unchecked Sendable {
    struct Item {
        var article: Int
        var body: String
        var line: Int
        var articlePath: String
        /// The ids of the article's own assets, which its placeholders are resolved against at once.
        var ownAssetIDs: Set<GlobalID.Key>
        /// `items.count` of the caller's findings when the body came.
        var position: Int
    }

    struct Result {
        var position: Int
        var findings: [Diagnostic]
        var placeholders: [ManifestIndex.PlaceholderRef]
        var bodyFiles: [(String, ManifestIndex.BodyFileRef)]
    }

    private let condition = NSCondition()
    private var queue: [Item] = []
    private var closed = false
    /// Written by the thread only, read once `finished` is signalled.
    private var results: [Result] = []
    private let finished = DispatchSemaphore(value: 0)
    private let display: String
    private let configuration: ValidationConfiguration
    /// Bodies queued at most: enough to keep the thread busy, few enough to be small.
    private let capacity = 16

    init(display: String, configuration: ValidationConfiguration) {
        self.display = display
        self.configuration = configuration
        Thread { [self] in work() }.start()
    }

    /// Queues one article's body (waits while the queue is full).
    func check(_ item: Item) {
        condition.lock()
        while queue.count >= capacity { condition.wait() }
        queue.append(item)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the last body; what the checks found, by article.
    func finish() -> [Result] {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
        return results
    }

    private func work() {
        let references = ReferenceChecks(manifestPath: display)
        while true {
            condition.lock()
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                break
            }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            condition.broadcast()
            condition.unlock()
            for item in batch {
                var findings = Findings(configuration: configuration)
                var index = ManifestIndex()
                references.placeholders(in: item.body, article: item.article, articlePath: item.articlePath, line: item.line,
                                        ownAssetIDs: item.ownAssetIDs, &index, into: &findings)
                let path = "\(item.articlePath).body"
                BodyChecks.run(item.body, at: { _, _ in
                    SourceLocation(path: self.display, line: item.line, jsonPath: path)
                }, lineNote: "of the body", into: &findings)
                if !findings.items.isEmpty || !index.placeholders.isEmpty || !index.bodyFiles.isEmpty {
                    results.append(Result(position: item.position, findings: findings.items, placeholders: index.placeholders,
                                          bodyFiles: index.bodyFiles.sorted { $0.key < $1.key }))
                }
            }
        }
        finished.signal()
    }
}

extension ManifestIndex {
    /// Adds what the body checks of later articles found: placeholders in order, and each body
    /// file's first reference.
    mutating func merge(_ result: BodyCheckThread.Result) {
        placeholders.append(contentsOf: result.placeholders)
        for (path, reference) in result.bodyFiles where bodyFiles[path] == nil { bodyFiles[path] = reference }
    }
}
