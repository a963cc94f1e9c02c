#!/usr/bin/env python3
"""Parses each HTML file given with html5lib's strict HTML5 parser (the WHATWG parsing
algorithm, every parse error raised) and prints one line per file that has an error:
`path: line L col C: error`. Exit status 1 when any file has one, 0 when all parse clean.

Usage: check_html5.py FILE.html [...]"""
import sys

import html5lib


def main(paths):
    bad = 0
    for path in paths:
        parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
        with open(path, "rb") as f:
            data = f.read()
        try:
            parser.parse(data)
        except html5lib.html5parser.ParseError as error:
            position, code, _ = parser.errors[-1] if parser.errors else ((0, 0), str(error), None)
            print(f"{path}: line {position[0]} col {position[1]}: {code}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
