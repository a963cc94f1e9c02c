#!/usr/bin/env python3
"""Checks a running `galley serve` against docs/openapi.yaml.

usage: check_openapi.py OPENAPI_YAML SCHEMA_DIR BASE_URL TOKEN UPLOAD_ZIP

Sends a set of real requests (every path and method of the document, good and bad), and for
each answer checks that its status is documented for that operation, that its Content-Type is
one the document names, and that a JSON body is valid against the documented schema (the
document's own and docs/json's, by their $ids). Fails too when an operation of the document
was never exercised. Prints each problem; exits 1 when there is one, 2 when the document itself
is unusable. Talks only to BASE_URL (the tests give it 127.0.0.1).
"""
import json
import pathlib
import sys
import urllib.error
import urllib.parse
import urllib.request

import jsonschema
import yaml

OPENAPI_ID = "urn:galley:openapi"


def make_validator(spec, schemas, pointer):
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": OPENAPI_ID + "#" + pointer}
    cls = jsonschema.Draft202012Validator
    documents = dict(schemas)
    spec_resource = dict(spec)
    spec_resource["$id"] = OPENAPI_ID
    documents[OPENAPI_ID] = spec_resource
    try:  # jsonschema >= 4.18: the referencing library
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        registry = Registry().with_resources(
            (uri, Resource.from_contents(doc, default_specification=DRAFT202012)) for uri, doc in documents.items()
        )
        return cls(schema, registry=registry)
    except ImportError:  # Debian 12's jsonschema 4.10
        return cls(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=documents))


def escape(segment):
    return segment.replace("~", "~0").replace("/", "~1")


def resolve(spec, node):
    """Follows a non-schema $ref (responses, parameters) inside the document."""
    while isinstance(node, dict) and "$ref" in node and node["$ref"].startswith("#/"):
        target = spec
        for part in node["$ref"][2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def fetch(base, method, path, headers=None, body=None):
    request = urllib.request.Request(base + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def main(argv):
    spec_path, schema_dir, base, token, upload = argv[1:6]
    try:
        spec = yaml.safe_load(pathlib.Path(spec_path).read_text())
        assert spec["openapi"].startswith("3.1"), "not OpenAPI 3.1"
    except Exception as error:  # noqa: BLE001 - any failure to read the document is exit 2
        print(f"{spec_path}: unusable: {error}")
        return 2
    schemas = {}
    for path in pathlib.Path(schema_dir).glob("*.schema.json"):
        schema = json.loads(path.read_text())
        schemas[schema["$id"]] = schema

    _, _, body = fetch(base, "GET", "/issues")
    issue = json.loads(body)["items"][0]["apple_id"]
    _, _, body = fetch(base, "GET", f"/v2/issues/{issue}")
    article = json.loads(body)["articles"][0]["global_id"]
    _, _, body = fetch(base, "GET", f"/packages/{issue}")
    package_file = json.loads(body)["file_path"].rsplit("/", 1)[1]
    _, headers, _ = fetch(base, "HEAD", f"/issues/{issue}/files/latest.json")
    latest_sha = headers["ETag"].strip('"')
    auth = {"Authorization": f"Bearer {token}"}
    zip_bytes = pathlib.Path(upload).read_bytes()

    # (template, method, concrete path, headers, body)
    requests = [
        ("/healthz", "get", "/healthz", {}, None),
        ("/metrics", "get", "/metrics", {}, None),
        ("/openapi.yaml", "get", "/openapi.yaml", {}, None),
        ("/issues", "get", "/issues", {}, None),
        ("/issues", "get", "/issues", {"Accept-Version": "1.0"}, None),
        ("/issues", "get", "/issues", {"Accept-Version": "9"}, None),
        ("/issues/{id}", "get", f"/issues/{issue}", {}, None),
        ("/issues/{id}", "get", f"/v1/issues/{issue}", {}, None),
        ("/issues/{id}", "get", "/issues/no-such-issue", {}, None),
        ("/issues", "get", f"/issues?older_than={issue}", {}, None),
        ("/issues", "get", "/issues?newer_than=no-such-issue", {}, None),
        ("/issues", "get", f"/issues?newer_than={issue}&older_than={issue}", {}, None),
        ("/issues/{id}/articles", "get", f"/issues/{issue}/articles?limit=1", {}, None),
        ("/issues/{id}/articles", "get", f"/v1/issues/{issue}/articles", {}, None),
        ("/issues/{id}/articles", "get", f"/issues/{issue}/articles?limit=0", {}, None),
        ("/articles", "get", "/articles?order=date", {}, None),
        ("/articles", "get", "/articles?featured=yes", {}, None),
        ("/articles", "get", "/articles?cursor=forged", {}, None),
        ("/articles/{id}", "get", f"/articles/{article}", {}, None),
        ("/articles/{id}", "get", "/articles/nope", {}, None),
        ("/articles/{id}/page", "get", f"/articles/{article}/page", {}, None),
        ("/articles/{id}/page", "get", "/articles/nope/page", {}, None),
        ("/assets", "get", f"/assets?issue={issue}", {}, None),
        ("/assets", "get", "/assets?kind=smell", {}, None),
        ("/assets", "get", f"/assets?issue={issue}&count=true", {}, None),
        ("/assets", "get", f"/assets?issue={issue}&cover=true", {}, None),
        ("/assets", "get", "/assets?cover=true", {}, None),
        ("/search", "get", "/search?q=the", {}, None),
        ("/search", "get", "/search", {}, None),
        ("/issues/{id}/files/{name}", "get", f"/issues/{issue}/files/latest.json", {}, None),
        ("/issues/{id}/files/{name}", "get", f"/issues/{issue}/files/latest.json", {"Range": "bytes=0-9"}, None),
        ("/issues/{id}/files/{name}", "get", f"/issues/{issue}/files/latest.json", {"Range": "bytes=999999999-"}, None),
        ("/issues/{id}/files/{name}", "get", f"/issues/{issue}/files/..%2Fstore.sqlite", {}, None),
        ("/issues/{id}/files/{name}", "head", f"/issues/{issue}/files/latest.json", {}, None),
        ("/issues/{id}/files/{sha256}/{name}", "get", f"/issues/{issue}/files/{latest_sha}/latest.json", {}, None),
        ("/issues/{id}/files/{sha256}/{name}", "get", f"/issues/{issue}/files/{'0' * 64}/latest.json", {}, None),
        ("/issues/{id}/files/{sha256}/{name}", "head", f"/issues/{issue}/files/{latest_sha}/latest.json", {}, None),
        ("/packages/{id}", "get", f"/packages/{issue}", {}, None),
        ("/packages/{id}", "get", "/packages/nope", {}, None),
        ("/feed", "get", "/feed", {}, None),
        ("/independent-articles", "get", "/independent-articles", {}, None),
        ("/packages/{id}/{file}", "get", f"/packages/{issue}/{package_file}", {}, None),
        ("/packages/{id}/{file}", "get", f"/packages/{issue}/{package_file}", {"Range": "bytes=-100"}, None),
        ("/packages/{id}/{file}", "get", f"/packages/{issue}/{'0' * 64}.zip", {}, None),
        ("/packages/{id}/{file}", "head", f"/packages/{issue}/{package_file}", {}, None),
        ("/issues", "post", "/issues", {}, zip_bytes),
        ("/issues", "post", "/issues", {**auth, "Content-Type": "application/zip"}, b"not a zip at all"),
        ("/issues", "post", "/issues?force=maybe", {**auth, "Content-Type": "application/zip"}, zip_bytes),
        ("/issues", "post", "/issues?force=true", {**auth, "Content-Type": "application/zip"}, zip_bytes),
        ("/issues/{id}", "delete", "/issues/nope", auth, None),
        ("/issues/{id}", "delete", f"/issues/{issue}", {}, None),
        ("/issues/{id}", "delete", f"/issues/{issue}", auth, None),
    ]

    problems = []
    exercised = set()
    for template, method, path, headers, body in requests:
        exercised.add((template, method))
        where = f"{method.upper()} {path}"
        operation = spec["paths"].get(template, {}).get(method)
        if operation is None:
            problems.append(f"{where}: the document has no {method} {template}")
            continue
        status, answer_headers, content = fetch(base, method.upper(), path, headers, body)
        responses = operation.get("responses", {})
        documented = responses.get(str(status))
        if documented is None:
            problems.append(f"{where}: status {status} is not documented (documented: {', '.join(responses)})")
            continue
        documented = resolve(spec, documented)
        media = documented.get("content")
        content_type = next((v for k, v in answer_headers.items() if k.lower() == "content-type"), None)
        if not media or method == "head" or status == 304:
            continue
        base_type = (content_type or "").split(";")[0].strip().lower()
        ranges = {"*/*", base_type.split("/")[0] + "/*"}
        if content_type not in media:
            # A media range (*/*, image/*) documents a file of any type it covers.
            if not ranges & set(media):
                problems.append(f"{where}: Content-Type {content_type!r} is not one of {list(media)}")
            continue
        if content_type.startswith("application/json"):
            key = content_type
            pointer = "/paths/" + escape(template) + "/" + method + "/responses/" + str(status)
            node = responses[str(status)]
            if "$ref" in node:
                pointer = node["$ref"][1:]
            pointer += "/content/" + escape(key) + "/schema"
            try:
                validator = make_validator(spec, schemas, pointer)
                document = json.loads(content)
                for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path)):
                    at = "".join(f"[{p!r}]" for p in error.absolute_path) or "(root)"
                    problems.append(f"{where}: {status}: at {at}: {error.message[:300]}")
            except Exception as error:  # noqa: BLE001 - an unresolvable pointer or bad JSON is a finding
                problems.append(f"{where}: cannot check: {str(error)[:300]}")

    for template, operations in spec["paths"].items():
        for method in operations:
            if method in ("get", "head", "post", "put", "delete", "patch") and (template, method) not in exercised:
                problems.append(f"{method.upper()} {template}: documented but never exercised")

    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
