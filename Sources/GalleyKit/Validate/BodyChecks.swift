import Foundation
import GalleyCore
import GalleyFormats

/// Checks on an article body's HTML (libxml2) and what a web view would run or fetch.
enum BodyChecks {
    /// The findings on a source article's finished body (`body`, as it goes into latest.json),
    /// located in the article's own file: at the line and column of an HTML body (its first
    /// line is the file's `lineOffset + 1`), at the file for Markdown, whose HTML is made (the
    /// message then names the line of that HTML). Pack and `validate SOURCE` report the same.
    package static func findings(
        of article: ArticleSource, body: String, lineOffset: Int, configuration: ValidationConfiguration
    ) -> [Diagnostic] {
        var found = Findings(configuration: configuration)
        let html = article.bodyFormat == .html
        run(body, at: { line, column in
            html ? SourceLocation(path: article.bodyFile, line: line + lineOffset, column: column)
                 : SourceLocation(path: article.bodyFile)
        }, lineNote: html ? nil : "of the HTML made from the Markdown", into: &found)
        return found.items
    }

    /// - Parameters:
    ///   - at: the location for a body line and column.
    ///   - lineNote: how messages name a body line when the location cannot point at it
    ///     (`"of the body"`), or `nil` when it can.
    package static func run(
        _ body: String, at: (_ line: Int, _ column: Int?) -> SourceLocation, lineNote: String?, into findings: inout Findings
    ) {
        guard !body.isEmpty else { return }
        let inspection = HTMLInspector.inspect(body)
        func note(_ line: Int, _ column: Int? = nil) -> String {
            guard let lineNote else { return "" }
            return " (line \(line)\(column.map { ", column \($0)" } ?? "") \(lineNote))"
        }
        for problem in inspection.problems {
            findings.add(.bodyHtmlMalformed, "\(problem.message)\(note(problem.line, problem.column))",
                         at: at(problem.line, problem.column),
                         hint: "Close every element you open, and quote attribute values.")
        }
        for script in inspection.scripts {
            findings.add(.bodyScript, "a <script> element\(note(script.line))", at: at(script.line, nil),
                         hint: "Remove it: article bodies are content, and the reader app's web view would run it.")
        }
        for handler in inspection.eventHandlers {
            findings.add(.bodyEventHandler, "`\(handler.what)` is an inline event handler\(note(handler.line))", at: at(handler.line, nil),
                         hint: "Remove the attribute.")
        }
        for url in inspection.javascriptURLs {
            findings.add(.bodyJavascriptUrl, "`\(url.what)` is a javascript: URL\(note(url.line))", at: at(url.line, nil),
                         hint: "Link to a page instead.")
        }
        for remote in inspection.remoteResources {
            findings.add(.bodyRemoteResource, "`\(remote.what)` loads `\(remote.value)` from the network\(note(remote.line))",
                         at: at(remote.line, nil), hint: "Ship the file inside the issue so it works offline.")
        }
    }
}

// MARK: Checks

extension BodyChecks {
    /// The checks on a body's HTML, in catalogue order.
    package static let checks: [Check] = [
        .bodyHtmlMalformed,
        .bodyScript,
        .bodyEventHandler,
        .bodyJavascriptUrl,
        .bodyRemoteResource,
    ]
}

extension Check {
    static let bodyHtmlMalformed = Check("body.html-malformed", .body, .warning, "The body's HTML is malformed.",
            explanation: "Reported by libxml2 with its line and column in the body (complaints about HTML5 elements libxml2 2.9 does not know are left out). Web views repair markup in ways that differ between versions.",
            triggering: [.body("<p>Intro</p>\n<p>Broken <b>bold</p>\n<div>never closed\n"), .fixture("sources/malformed-html-warning").at(line: 5)],
            clean: [.body("<figure><video controls><source src=\"a.mp4\" type=\"video/mp4\"></video><figcaption>Fine</figcaption></figure>\n")])
    static let bodyScript = Check("body.script", .body, .error, "The body contains a `<script>`.",
            explanation: "The reader app's web view would run it.",
            triggering: [.body("<p>x</p><script>alert(1)</script>\n"), .fixture("sources/script-body-error")], clean: [.validManifest])
    static let bodyEventHandler = Check("body.event-handler", .body, .error, "An element has an inline event handler (`onclick`, `onerror`...).",
            explanation: "The reader app's web view would run it.",
            triggering: [.body("<img src=\"x.jpg\" onerror=\"alert(1)\">\n")], clean: [.body("<img src=\"x.jpg\" alt=\"on\">\n")])
    static let bodyJavascriptUrl = Check("body.javascript-url", .body, .error, "A link or source is a `javascript:` URL.",
            explanation: "The reader app's web view would run it when tapped or loaded.",
            triggering: [.body("<a href=\" javascript:alert(1)\">tap</a>\n")], clean: [.body("<a href=\"https://example.com/javascript\">tap</a>\n")])
    static let bodyRemoteResource = Check("body.remote-resource", .body, .info, "The body loads something from the network.",
            explanation: "Images, media and frames from remote servers do not load offline and leak the reader's activity.",
            triggering: [.body("<img src=\"https://cdn.example.com/a.jpg\">\n")], clean: [.body("<a href=\"https://example.com\">link</a>\n")])
}
