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
        let process = Process()
        process.executableURL = Harness.galley
        process.arguments = ["preview", source.path, "--port", "0", "--json", "-q"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var text = Data()
        let deadline = Date().addingTimeInterval(30)
        while !text.contains(UInt8(ascii: "}")), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text.append(chunk)
        }
        let listening = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any], "\(String(decoding: text, as: UTF8.self))")
        let port = try #require(listening["port"] as? Int)
        #expect(listening["articles"] as? Int == 4)
        let article = try #require(try FileManager.default.contentsOfDirectory(atPath: source.appending(path: "articles/01-the-lighthouse-keepers").path)
            .first { $0.hasSuffix(".md") })
        let script = """
            import http.client, re, sys, time, urllib.request
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
            with open(issue, "a") as f:
                f.write("\\nthis is: [not yaml\\n")
            event = next_event()
            print("broken", event[0], urllib.request.urlopen(base + "/" + link).status)
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
            done

            """, "\(result.stdout)\(result.stderr)")
        kill(process.processIdentifier, SIGTERM)
        let stop = Date().addingTimeInterval(15)
        while process.isRunning && Date() < stop { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!process.isRunning, "SIGTERM stops it, open event streams included")
        #expect(process.isRunning || process.terminationReason == .exit)
    }
}
