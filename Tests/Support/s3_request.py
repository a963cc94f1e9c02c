#!/usr/bin/env python3
"""One signed S3 request (AWS Signature Version 4, path-style), for tests that talk to the S3
test server (scripts/s3-test-server.sh) as a client would: a real server refuses unsigned ones.

Usage: s3_request.py METHOD ENDPOINT/BUCKET[/KEY][?QUERY] [BODY_FILE]
Credentials and region from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION (default
us-east-1). Prints the status on the first line, then the headers as `name: value`, a blank
line and the body; exits 0 for any answer (the caller checks the status), 2 when unreachable.
"""
import datetime
import hashlib
import hmac
import os
import sys
import urllib.error
import urllib.parse
import urllib.request


def sign(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def main():
    method, address = sys.argv[1], sys.argv[2]
    body = open(sys.argv[3], "rb").read() if len(sys.argv) > 3 else b""
    access = os.environ["AWS_ACCESS_KEY_ID"]
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    region = os.environ.get("AWS_REGION", "us-east-1")
    url = urllib.parse.urlsplit(address)
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload = hashlib.sha256(body).hexdigest()
    headers = {"host": url.netloc, "x-amz-content-sha256": payload, "x-amz-date": stamp}
    path = urllib.parse.quote(urllib.parse.unquote(url.path or "/"), safe="/-_.~")
    pairs = sorted(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
    query = "&".join(urllib.parse.quote(k, safe="-_.~") + "=" + urllib.parse.quote(v, safe="-_.~") for k, v in pairs)
    names = sorted(headers)
    canonical = "\n".join([method, path, query, "".join(f"{n}:{headers[n]}\n" for n in names), ";".join(names), payload])
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = sign(sign(sign(sign(("AWS4" + secret).encode(), day), region), "s3"), "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = f"AWS4-HMAC-SHA256 Credential={access}/{scope}, SignedHeaders={';'.join(names)}, Signature={signature}"
    request = urllib.request.Request(address, data=body if method in ("PUT", "POST") else None, method=method,
                                     headers={k: v for k, v in headers.items() if k != "host"})
    try:
        response = urllib.request.urlopen(request, timeout=30)
    except urllib.error.HTTPError as error:
        response = error
    except OSError as error:
        print(f"s3_request: {address}: {error}", file=sys.stderr)
        sys.exit(2)
    out = sys.stdout.buffer
    out.write(f"{response.status}\n".encode())
    for name, value in response.headers.items():
        out.write(f"{name}: {value}\n".encode())
    out.write(b"\n" + response.read())


main()
