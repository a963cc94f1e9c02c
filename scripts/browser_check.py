#!/usr/bin/env python3
"""Opens a rendered preview site in headless Chromium and fails if anything does not load.

For index.html and every article page: every <img> must decode, every <audio> and <video> must
load its metadata, no request may fail, and the page may log no error or exception. Saves a
screenshot of the index and of the first article page next to the site (or in --screenshots).
Talks to Chromium over the DevTools protocol with a minimal WebSocket client (stdlib only).

With --serve STORE, the pages are the article pages `galley serve` renders from that store
(/articles/{id}/page, pictures and media from its downloads): it starts the binary given by
--galley on a free loopback port, checks every article's page, and stops it.

With --preview SOURCE, the page is `galley preview`'s index of a copy of that source folder:
it must load, then an edit that breaks the copy's issue.yaml must put the findings box over the
open page (with the file, line and check id), and mending it must take the box away.

Usage: scripts/browser_check.py SITE_DIR [--screenshots DIR] [--chromium PATH]
       scripts/browser_check.py --serve STORE --galley PATH [--screenshots DIR]
       scripts/browser_check.py --preview SOURCE --galley PATH [--screenshots DIR]
Exit status: 0 all loaded, 1 something failed to load, 2 could not run.
"""
import argparse
import base64
import glob
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

TIMEOUT = 30


class WebSocket:
    """Just enough of RFC 6455 for DevTools: text frames, client masking, no extensions."""

    def __init__(self, url):
        match = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        host, port, path = match.group(1), int(match.group(2)), match.group(3)
        self.sock = socket.create_connection((host, port), timeout=TIMEOUT)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            response += self.sock.recv(4096)
        if b" 101 " not in response.split(b"\r\n")[0]:
            raise RuntimeError(f"websocket handshake failed: {response[:200]!r}")
        self.buffer = response.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        header = bytearray([0x81])
        if len(data) < 126:
            header.append(0x80 | len(data))
        elif len(data) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(data))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(data))
        mask = os.urandom(4)
        self.sock.sendall(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("websocket closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def receive(self):
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)
            opcode = first & 0x0F
            if opcode in (0x1, 0x0):
                message += payload
                if first & 0x80:
                    return message.decode()
            elif opcode == 0x8:
                raise RuntimeError("websocket closed by the browser")


class Page:
    def __init__(self, ws_url):
        self.ws = WebSocket(ws_url)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            message = json.loads(self.ws.receive())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)
        raise RuntimeError(f"{method}: no answer")

    def wait_for(self, method):
        """The first `method` event; every other event stays in `events` for the checks."""
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                del self.events[i]
                return event
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            message = json.loads(self.ws.receive())
            if message.get("method") == method:
                return message
            self.events.append(message)
        raise RuntimeError(f"timed out waiting for {method}")


MEDIA_CHECK = """
(async () => {
  const problems = [];
  for (const img of document.images) {
    if (!img.complete) await new Promise(r => { img.onload = img.onerror = r; setTimeout(r, 10000); });
    if (img.naturalWidth === 0) problems.push('image did not load: ' + img.currentSrc);
  }
  for (const media of document.querySelectorAll('audio, video')) {
    if (media.readyState >= 1) continue;
    media.preload = 'metadata';
    const outcome = await new Promise(resolve => {
      media.addEventListener('loadedmetadata', () => resolve('ok'), {once: true});
      media.addEventListener('error', () => resolve('error ' + (media.error && media.error.code)), {once: true});
      setTimeout(() => resolve('timeout'), 10000);
      media.load();
    });
    if (outcome !== 'ok') problems.push(media.tagName.toLowerCase() + ' did not load (' + outcome + '): ' + (media.currentSrc || media.src));
  }
  return JSON.stringify(problems);
})()
"""


def find_chromium(given):
    for name in ([given] if given else []) + ["chromium", "chromium-browser", "google-chrome"]:
        path = shutil.which(name) if name else None
        if path:
            return path
    sys.exit("browser_check: no chromium on PATH (scripts/setup.sh --browser installs it)")


def check_page(page, url, screenshot, hostile=False):
    page.events.clear()
    page.call("Page.navigate", url=url)
    page.wait_for("Page.loadEventFired")
    if hostile:
        # No media check (the hostile issue's media are stubs): give event handlers and
        # animations time to fire, then count what ran.
        time.sleep(1.5)
        page.call("Runtime.evaluate", expression="1", returnByValue=True)
        problems = []
    else:
        result = page.call("Runtime.evaluate", expression=MEDIA_CHECK, awaitPromise=True, returnByValue=True)
        problems = json.loads(result["result"]["value"])
    for event in page.events:
        method, params = event.get("method"), event.get("params", {})
        if hostile and method == "Runtime.consoleAPICalled":
            problems.append("script ran: console." + params.get("type", "") + " "
                            + " ".join(str(a.get("value", "")) for a in params.get("args", [])))
            continue
        if method == "Page.javascriptDialogOpening":
            problems.append("script ran: a dialog opened: " + params.get("message", ""))
            page.ws.send(json.dumps({"id": 0, "method": "Page.handleJavaScriptDialog", "params": {"accept": True}}))
            continue
        if hostile and method == "Network.loadingFailed":
            continue
        if method == "Network.loadingFailed" and not params.get("canceled"):
            problems.append(f"request failed: {params.get('errorText')} ({params.get('requestId')})")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            problems.append("exception: " + details.get("text", "") + " " + str(details.get("exception", {}).get("description", "")) + " at " + str(details.get("url", "")) + ":" + str(details.get("lineNumber", "")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            problems.append("console error: " + " ".join(str(a.get("value", "")) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("url", "").endswith("/favicon.ico"):
            continue  # the browser's own request, not the page's
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            problems.append("log error: " + params["entry"].get("text", "") + " " + params["entry"].get("url", ""))
    if screenshot:
        shot = page.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        with open(screenshot, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
    return problems


def listening(arguments):
    """Starts `galley ARGUMENTS --port 0 --json -q`; returns it and the URL its first document names
    (None, None when it did not start)."""
    server = subprocess.Popen(arguments + ["--port", "0", "--json", "-q"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    text = ""
    deadline = time.time() + TIMEOUT
    while "}" not in text and time.time() < deadline:
        line = server.stdout.readline()
        if not line:
            break
        text += line
    try:
        return server, json.loads(text)["url"]
    except (ValueError, KeyError):
        print(f"browser_check: galley {arguments[1]} did not start: {text!r}", file=sys.stderr)
        server.kill()
        return None, None


def start_server(galley, store):
    """Starts `galley serve` on a free loopback port; returns it and its article page URLs."""
    server, base = listening([galley, "serve", "--store", store])
    if server is None:
        return None, []
    articles = json.load(urllib.request.urlopen(base + "/articles?limit=100", timeout=TIMEOUT))["items"]
    return server, [f"{base}/articles/{a['global_id']}/page" for a in articles]


def start_preview(galley, source):
    """`galley preview` of a copy of `source` on a free loopback port: the server, the copy, its index URL."""
    copy = os.path.join(tempfile.mkdtemp(prefix="galley-preview-check-"), "issue")
    shutil.copytree(source, copy)
    server, base = listening([galley, "preview", copy])
    return server, copy, base


FAILURE_BOX = "(document.getElementById('galley-preview-failure') || {}).textContent || ''"


def check_failure_box(page, copy, shots):
    """Breaks the copy's issue.yaml under the open page, then mends it: the box must come and go."""
    problems = []
    issue = os.path.join(copy, "issue.yaml")
    good = open(issue).read()

    def box_text(until, seconds=15):
        deadline = time.time() + seconds
        while time.time() < deadline:
            text = page.call("Runtime.evaluate", expression=FAILURE_BOX, returnByValue=True)["result"].get("value", "")
            if until(text):
                return text
            time.sleep(0.2)
        return None

    with open(issue, "a") as f:
        f.write("\nthis is: [not yaml\n")
    shown = box_text(lambda text: text != "")
    if shown is None:
        problems.append("a broken issue.yaml put no findings box over the page")
    elif not re.search(r"issue\.yaml:\d+:\d+: error source\.yaml-invalid", shown):
        problems.append("the findings box does not name the file, line and check: " + shown[:200])
    else:
        shot = page.call("Page.captureScreenshot", format="png")
        with open(os.path.join(shots, "preview-failure.png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
    with open(issue, "w") as f:
        f.write(good)
    if shown is not None and box_text(lambda text: text == "") is None:
        problems.append("the findings box stayed after issue.yaml was mended")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("site", nargs="?")
    parser.add_argument("--serve", metavar="STORE", help="check the article pages galley serve renders from STORE")
    parser.add_argument("--preview", metavar="SOURCE", help="check galley preview of a copy of SOURCE, a failed rebuild included")
    parser.add_argument("--galley", default=".build/debug/galley", help="the galley binary for --serve and --preview")
    parser.add_argument("--screenshots", help="where to save index.png and article.png (default: beside the site)")
    parser.add_argument("--chromium")
    parser.add_argument("--hostile", action="store_true",
                        help="the site holds hostile bodies: fail on any script that runs and any console error, "
                             "not on media that does not load")
    args = parser.parse_args()
    server = None
    preview_copy = None
    if args.preview:
        server, preview_copy, base = start_preview(args.galley, args.preview)
        if server is None:
            shutil.rmtree(os.path.dirname(preview_copy), ignore_errors=True)
            return 2
        urls, site = [base], None
    elif args.serve:
        server, urls = start_server(args.galley, args.serve)
        if server is None:
            return 2
        site = None
    else:
        if not args.site:
            parser.error("give SITE_DIR or --serve STORE")
        site = os.path.abspath(args.site)
        if not os.path.exists(os.path.join(site, "index.html")):
            print(f"browser_check: {site} has no index.html", file=sys.stderr)
            return 2
        urls = None
    shots = os.path.abspath(args.screenshots or (os.path.dirname(site) if site else "."))
    os.makedirs(shots, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="galley-chromium-")
    chromium = subprocess.Popen(
        [find_chromium(args.chromium), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-dev-shm-usage", "--autoplay-policy=no-user-gesture-required", "--allow-file-access-from-files",
         "--remote-debugging-port=0", f"--user-data-dir={profile}", "--window-size=900,1200", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and port is None:
            line = chromium.stderr.readline()
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line or "")
            if match:
                port = int(match.group(1))
            elif not line and chromium.poll() is not None:
                break
        if port is None:
            print("browser_check: chromium did not start", file=sys.stderr)
            return 2
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=TIMEOUT))
        page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(f"{domain}.enable")
        if urls is None:
            pages = [os.path.join(site, "index.html")] + sorted(glob.glob(os.path.join(site, "articles", "*.html")))
            urls = ["file://" + path for path in pages]
        else:
            pages = urls
        failed = 0
        for i, path in enumerate(pages):
            shot = os.path.join(shots, "index.png") if i == 0 else os.path.join(shots, "article.png") if i == 1 else None
            if server is not None:
                shot = os.path.join(shots, "preview.png" if preview_copy else "served-article.png") if i == 0 else None
            problems = check_page(page, urls[i], shot, hostile=args.hostile)
            status = "ok" if not problems else "FAILED"
            print(f"{status:6} {os.path.relpath(path, site) if site else path}")
            for problem in problems:
                print(f"       {problem}")
            failed += bool(problems)
        checked = len(pages)
        if preview_copy is not None and not failed:
            problems = check_failure_box(page, preview_copy, shots)
            print(f"{'ok' if not problems else 'FAILED':6} a failed rebuild's findings over the page, gone once mended")
            for problem in problems:
                print(f"       {problem}")
            failed += bool(problems)
            checked += 1
        print(f"{checked - failed} passed, {failed} failed")
        return 1 if failed else 0
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        if preview_copy is not None:
            shutil.rmtree(os.path.dirname(preview_copy), ignore_errors=True)
        chromium.terminate()
        try:
            chromium.wait(timeout=10)
        except subprocess.TimeoutExpired:
            chromium.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
