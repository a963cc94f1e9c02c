import Foundation
import GalleyCore
import GalleyFormats

public struct ValidationOptions: Sendable {
    /// Inflate every entry to check CRCs and real sizes, and read media headers.
    public var fullCheck = true
    public var configuration = ValidationConfiguration()

    public init() {}
}

/// The findings for one input.
public struct InputReport: Sendable, Codable {
    public enum Kind: String, Sendable, Codable {
        case zip, source, manifest
    }

    public var path: String
    public var kind: Kind
    public var diagnostics: [Diagnostic]

    public var errors: Int { diagnostics.filter { $0.severity == .error }.count }
    public var warnings: Int { diagnostics.filter { $0.severity == .warning }.count }
}

/// `galley validate`: sources, zips and manifests, checked the way a CI step needs.
public struct Validator: Sendable {
    public var options: ValidationOptions

    public init(options: ValidationOptions = ValidationOptions()) {
        self.options = options
    }

    /// Is handed each article of a latest.json as its checks pass it: its position (from 0),
    /// its node, and the issue's members read before it. Called on the checks' thread, in order;
    /// what it is handed says nothing of the checks' outcome, which is only known at the end.
    package typealias ArticleObserver = @Sendable (Int, LocatedJSON, [LocatedJSON.Member]) -> Void

    /// Validates one path: an issue source folder, a zip, a bare latest.json, or a folder of
    /// zips (each becomes a report). Throws `GalleyError` when the path cannot be used at all.
    public func validate(path: String) throws -> [InputReport] {
        switch try IssueInput.detect(path) {
        case .source: [validateSource(path: path)]
        case .zipFolder(let zips): zips.map { validateZip(path: $0) }
        case .zip: [validateZip(path: path)]
        case .manifest: [validateManifest(path: path)]
        }
    }

    // MARK: Manifests

    public func validateManifest(path: String) -> InputReport {
        var findings = Findings(configuration: options.configuration)
        if var reader = try? ManifestStream(file: URL(fileURLWithPath: path)) {
            let index = checkManifest(&reader, display: path, top: nil, into: &findings)
            ReferenceChecks(manifestPath: path).run(index, contents: nil, into: &findings)
        } else {
            findings.add(.manifestJson, "cannot be read", at: SourceLocation(path: path), hint: "Check the file's permissions.")
        }
        return InputReport(path: path, kind: .manifest, diagnostics: findings.items)
    }

    /// Validates a latest.json text as if it were a bare file named `display`.
    public func validateManifestText(_ text: String, display: String = "latest.json") -> [Diagnostic] {
        var findings = Findings(configuration: options.configuration)
        var reader = ManifestStream(text: text)
        let index = checkManifest(&reader, display: display, top: nil, into: &findings)
        ReferenceChecks(manifestPath: display).run(index, contents: nil, into: &findings)
        return findings.items
    }

    /// Streams latest.json: the issue's members are kept, each article is parsed, checked
    /// (manifest, placeholders, body HTML) and dropped. Memory stays that of one article.
    /// - Parameter articles: handed each article once its checks have run, on this thread (an
    ///   import writes its rows from them while the rest of the zip is checked and extracted).
    func checkManifest(
        _ reader: inout ManifestStream, display: String, top: String?, into findings: inout Findings, articles: ArticleObserver? = nil
    ) -> ManifestIndex {
        let checks = ManifestChecks(path: display)
        var index = ManifestIndex()
        let issue: ManifestStream.Issue
        let bodies = BodyCheckThread(display: display, configuration: findings.configuration)
        // The body checks' results, once the last article is read (or the reading failed).
        func absorbBodies() {
            let checked = bodies.finish()
            for result in checked { index.merge(result) }
            findings.insert(checked.map { ($0.position, $0.findings) })
        }
        do {
            issue = try reader.read { number, article, members in
                checks.checkArticle(number, article, &index, into: &findings, bodies: bodies)
                articles?(number, article, members)
            }
        } catch let failure as ManifestStream.Failure {
            absorbBodies()
            findings.adopt([Self.diagnostic(for: failure, display: display)])
            return index
        } catch {
            absorbBodies()
            return index
        }
        absorbBodies()
        for duplicate in reader.duplicateKeys {
            findings.add(.manifestDuplicateKey, "`\(duplicate.key)` is given twice in one object",
                         at: SourceLocation(path: display, line: duplicate.line, column: duplicate.column),
                         hint: "Keep one: readers disagree on which counts (Galley's took the last, many take the first), so the value checked may not be the one used.")
        }
        if reader.duplicateKeyCount > reader.duplicateKeys.count {
            findings.add(.manifestDuplicateKey, "\(reader.duplicateKeyCount - reader.duplicateKeys.count) more keys are given twice",
                         at: SourceLocation(path: display), hint: "Keep one of each.")
        }
        index.issue = issue.record
        let root = issue.node
        checks.checkIssue(root, articlesSeen: issue.articlesStreamed, &index, into: &findings)
        checks.finish(&index, root: root, into: &findings)
        if let top, let appleID = index.appleID, appleID != top {
            findings.add(.manifestAppleId, "apple_id is `\(appleID)` but the zip's folder is `\(top)`",
                         at: SourceLocation(path: display, line: root["apple_id"]?.line, jsonPath: "apple_id"),
                         hint: "Make them equal: Dumpling builds every asset path from apple_id.")
        }
        return index
    }

    /// What a manifest that cannot be read to its end is reported as (by validate, and by
    /// render, which stops there), located in `display` (a file, or `zip!entry`).
    package static func diagnostic(for failure: ManifestStream.Failure, display: String) -> Diagnostic {
        let fix = "Fix the JSON at that place; a JSON linter shows the same spot."
        let (check, message, line, column, hint): (Check, String, Int?, Int?, String)
        switch failure {
        case .source(let text): (check, message, line, column, hint) = (.zipData, "latest.json cannot be read: \(text)", nil, nil, "Download or pack the zip again.")
        case .syntax(let error): (check, message, line, column, hint) = (.manifestJson, "invalid JSON: \(error.message)", error.line, error.column, fix)
        case .byteOrderMark: (check, message, line, column, hint) = (.manifestJson, "invalid JSON: starts with a byte-order mark", 1, 1, fix)
        case .notAnObject(let value):
            (check, message, line, column, hint) = (.manifestType, "latest.json is \(value.typeName), not an object", value.line, value.column,
                                                    "The top level of latest.json is the issue object.")
        }
        return Diagnostic(check, message, at: SourceLocation(path: display, line: line, column: column), hint: hint)
    }

    // MARK: Zips

    /// `galley validate` on a zip: the container checks on the central directory (a zip they
    /// refuse has no content read: bombs, slips, damage), then one streaming pass over every
    /// entry (CRCs, real sizes, latest.json's checks, media heads, SVG script), then the
    /// reference and media checks on what the pass saw.
    public func validateZip(path: String) -> InputReport {
        var findings = Findings(configuration: options.configuration)
        guard let (directory, top, manifestName) = openZip(path, into: &findings) else {
            return InputReport(path: path, kind: .zip, diagnostics: findings.items)
        }
        var contents = ZipContents(directory, top: top)
        let pass = EntryPass(path: path, directory: directory, top: top, manifestName: manifestName,
                             mode: options.fullCheck ? .everything : .manifestOnly, checker: self)
        // No sink: nothing is written, so nothing can fail to be written.
        let index: ManifestIndex?
        if options.fullCheck, directory.entries.first?.displayName == manifestName {
            index = checkBothHalves(pass, contents: &contents, into: &findings)
        } else {
            index = (try? pass.run(sink: nil, contents: &contents, into: &findings)) ?? nil
        }
        if let index, options.fullCheck {
            let checked = MediaChecks(zipPath: path).runAll(
                index, contents: contents, beside: ReferenceChecks(manifestPath: pass.manifestDisplay), configuration: findings.configuration)
            findings.append(checked.references)
            findings.append(checked.media)
        } else {
            if let index { ReferenceChecks(manifestPath: pass.manifestDisplay).run(index, contents: contents, into: &findings) }
            if options.fullCheck { MediaChecks(zipPath: path).runSVG(contents: contents, into: &findings) }
        }
        return InputReport(path: path, kind: .zip, diagnostics: findings.items)
    }

    /// The full check's pass as two at once, on two cores: latest.json's checks here, every
    /// other entry's content on a thread of its own, each reading the zip once. (At 30,000
    /// articles the checks of a 128 MB latest.json and the CRCs of 60,000 files each take about
    /// as long as `unzip -tq` takes for the whole zip.) The findings are the one pass's: the
    /// manifest's first, as latest.json is the first entry; and when latest.json is damaged the
    /// one pass would have stopped there, so the content's findings are dropped.
    private func checkBothHalves(_ pass: EntryPass, contents: inout ZipContents, into findings: inout Findings) -> ManifestIndex? {
        let opening = ZipOpening(pass: pass, contents: contents, configuration: options.configuration)
        // Without a sink neither pass throws. Should one ever, the one-thread pass decides: a
        // zip is never let through because a part of its check went missing.
        guard let halves = try? opening.bothHalves(contentMode: .besideManifest, sink: nil) else {
            return (try? pass.run(sink: nil, contents: &contents, into: &findings)) ?? nil
        }
        findings.append(halves.manifestFindings)
        // The one pass would have stopped at latest.json: no file was looked at.
        guard halves.index != nil else { return nil }
        findings.append(halves.contentFindings)
        contents = halves.contents
        return halves.index
    }

    /// The container checks only (the central directory; no content read), the first step of
    /// an import. Returns the findings, and what the rest of the checks need when the container
    /// is sound: `ZipOpening.checkHead` (latest.json and the references, before the content
    /// pass), or `ZipOpening.checkBeside` (all of it, latest.json's checks beside the pass).
    package func openZipForImport(path: String) -> (report: InputReport, opening: ZipOpening?) {
        var findings = Findings(configuration: options.configuration)
        guard let (directory, top, manifestName) = openZip(path, into: &findings) else {
            return (InputReport(path: path, kind: .zip, diagnostics: findings.items), nil)
        }
        let pass = EntryPass(path: path, directory: directory, top: top, manifestName: manifestName, mode: .contentOnly, checker: self)
        let opening = ZipOpening(pass: pass, contents: ZipContents(directory, top: top), configuration: options.configuration)
        return (InputReport(path: path, kind: .zip, diagnostics: findings.items), opening)
    }

    /// The central directory and the container checks; `nil` (with the findings saying why)
    /// when no content may be read.
    private func openZip(_ path: String, into findings: inout Findings) -> (ZipDirectory, String, String)? {
        let gate = ContainerChecks(path: path, limits: options.configuration.limits)
        guard let directory = gate.open(into: &findings) else { return nil }
        // Anything wrong with the container: read no content (bombs, slips, damage).
        guard !findings.hasErrors, let top = directory.topFolder else { return nil }
        let manifestName = "\(top)/latest.json"
        guard let manifestIndex = directory.entries.firstIndex(where: { $0.displayName == manifestName }) else {
            findings.add(.zipManifestMissing, "the zip has no `\(manifestName)`", at: SourceLocation(path: path),
                         hint: "Pack the issue with galley pack: latest.json describes the issue.")
            return nil
        }
        if manifestIndex != 0 {
            findings.add(.zipManifestNotFirst, "latest.json is entry \(manifestIndex + 1), not the first", at: SourceLocation(path: path),
                         hint: "galley pack writes it first.")
        }
        return (directory, top, manifestName)
    }

    // MARK: Sources

    public func validateSource(path: String) -> InputReport {
        var findings = Findings(configuration: options.configuration)
        do {
            let diagnostics = try Packer().check(URL(fileURLWithPath: path), configuration: options.configuration)
            findings.adopt(diagnostics)
        } catch let error as GalleyError {
            findings.add(.sourceIssueFileMissing, error.description, at: SourceLocation(path: ""), hint: error.hint)
        } catch {
            findings.add(.sourceIssueFileMissing, "\(error)", at: SourceLocation(path: ""))
        }
        return InputReport(path: path, kind: .source, diagnostics: findings.items)
    }
}


extension Validator {
    /// Validates every path; a path that cannot be used at all is a failure beside the reports.
    /// Source folders' findings are located relative to the working directory.
    /// Every path's report; a path that cannot be checked at all is a failure of the run.
    public func validate(paths: [String]) -> ValidationRun {
        var reports: [InputReport] = []
        var failures: [GalleyError] = []
        for path in paths {
            do {
                reports += try validate(path: path)
            } catch let error as GalleyError {
                failures.append(error)
            } catch {
                failures.append(GalleyError("\(error)", id: .inputUnreadable, path: path))
            }
        }
        return ValidationRun(reports: reports, failures: failures).relocatingSources()
    }
}
