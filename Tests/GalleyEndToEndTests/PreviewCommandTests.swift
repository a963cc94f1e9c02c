import Foundation
import Testing

/// `galley preview` as a writer runs it: the binary serving a copy of the example, a real edit
/// of an article's file, the open page's event stream naming the pages it touched, a broken
/// edit keeping the last good site, and SIGTERM ending it all (event streams included).
@Suite struct PreviewCommandTests {
    @Test func anEditRebuildsTheTouchedPagesAndTellsTheOpenPage() throws {
        let work = try Harness.temporaryDirectory()
        let source = work.appending(path: "issue")
        try FileManager.default.copyItem(at: Harness.example, to: source)
        let server = try Harness.listening(["preview", source.path, "--port", "0", "--json", "-q"])
        defer { server.stop() }
        let (process, port, listening) = (server.process, server.port, server.document)
        #expect(listening["articles"] as? Int == 4)
        let document = work.appending(path: "preview.json")
        try server.text.write(to: document)
        let schema = try Harness.tool("python3", [Harness.root.appending(path: "Tests/Support/check_json_schema.py").path,
                                                  Harness.root.appending(path: "docs/json").path, "preview=\(document.path)"])
        #expect(schema.status == 0, "\(schema.stdout)\(schema.stderr)")
        let article = try #require(try FileManager.default.contentsOfDirectory(atPath: source.appending(path: "articles/01-the-lighthouse-keepers").path)
            .first { $0.hasSuffix(".md") })
        let script = """
            import http.client, json, re, sys, time, urllib.request
            port, article, issue = int(sys.argv[1]), sys.argv[2], sys.argv[3]
            base = f"http://127.0.0.1:{port}"
            page = urllib.request.urlopen(base + "/").read().decode()
            link = re.search(r'href="(articles/001-[^"]+)"', page).group(1)
            first = urllib.request.urlopen(base + "/" + link).read().decode()
            print("index", '<script src="/_galley/reload.js"></script>' in page, "script-src &#39;self&#39;; connect-src &#39;self&#39;" in first and "script-src &#39;none&#39;" not in first)
            events = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            events.request("GET", "/_galley/events")
            stream = events.getresponse()
            print("stream", stream.status, stream.getheader("Content-Type"))
            def next_event():
                lines = []
                while True:
                    line = stream.readline().decode()
                    if line in ("\\n", "") and lines:
                        return lines
                    if line.strip():
                        lines.append(line.strip())
            next_event()  # retry:
            text = open(article).read()
            open(article, "w").write(re.sub(r"(?m)^title: .*$", 'title: "Keepers of the Light"', text, count=1))
            event = next_event()
            print("event", event[0], link in event[1], "articles/004" not in event[1])
            print("page", "<h1>Keepers of the Light</h1>" in urllib.request.urlopen(base + "/" + link).read().decode())
            good = open(issue).read()
            with open(issue, "a") as f:
                f.write("\\nthis is: [not yaml\\n")
            event = next_event()
            print("broken", event[0], urllib.request.urlopen(base + "/" + link).status)
            # The findings as validate prints them (file:line:col, id, hint) and as its JSON has them.
            failure = json.loads(event[1][len("data: "):])
            found = failure["findings"][0]
            print("findings", re.search(r"issue\\.yaml:\\d+:\\d+: error source\\.", failure["text"]) is not None,
                  "Diagnostic" not in failure["text"], found["location"]["path"].endswith("issue.yaml"), found["location"]["line"] is not None)
            # A page opened now is told at once; the script draws the findings over the page.
            late = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            late.request("GET", "/_galley/events")
            greeting = late.getresponse().read1().decode()
            script = urllib.request.urlopen(base + "/_galley/reload.js").read().decode()
            print("late", "event: failure" in greeting, "galley-preview-failure" in script and "textContent" in script)
            open(issue, "w").write(good)
            event = next_event()
            print("fixed", event[0])
            for hostile in ["/..%2F..%2Fetc%2Fpasswd", "/articles/..%2F..%2Fissue.yaml", "/.hidden", "/assets/%00"]:
                try:
                    urllib.request.urlopen(base + hostile)
                    print("hostile served", hostile)
                except urllib.error.HTTPError as error:
                    if error.code != 404:
                        print("hostile", hostile, error.code)
            print("done")
            """
        let result = try Harness.tool("python3", ["-c", script, String(port), source.appending(path: "articles/01-the-lighthouse-keepers/\(article)").path,
                                                  source.appending(path: "issue.yaml").path])
        #expect(result.stdout == """
            index True True
            stream 200 text/event-stream
            event event: change True True
            page True
            broken event: failure 200
            findings True True True True
            late True True
            fixed event: fixed
            done

            """, "\(result.stdout)\(result.stderr)")
        kill(process.processIdentifier, SIGTERM)
        let stop = Date().addingTimeInterval(15)
        while process.isRunning && Date() < stop { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!process.isRunning, "SIGTERM stops it, open event streams included")
        #expect(process.isRunning || process.terminationReason == .exit)
    }

    /// What is not a source folder is refused before anything listens: a missing path, a zip
    /// (render takes zips; preview watches a folder someone edits), in the one error shape.
    @Test func onlyASourceFolderIsPreviewed() throws {
        let missing = try Harness.galley(["preview", "/no/such/issue", "--port", "0", "--json"])
        #expect(missing.status == 2)
        #expect((missing.json?["error"] as? [String: Any])?["id"] as? String == "input.not-found", "\(missing.stdout)")
        let zip = try Harness.galley(["preview", Harness.fixtures.appending(path: "zips/example-valid.zip").path, "--port", "0", "--json"])
        #expect(zip.status == 2)
        let error = try #require(zip.json?["error"] as? [String: Any], "\(zip.stdout)")
        #expect(error["id"] as? String == "input.wrong-kind")
        #expect((error["hint"] as? String)?.contains("galley render") == true)
    }
}
