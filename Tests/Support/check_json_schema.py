#!/usr/bin/env python3
"""Validates Galley's JSON outputs against the schemas in docs/json/.

usage: check_json_schema.py SCHEMA_DIR NAME=FILE [NAME=FILE ...]
Each FILE must hold one JSON document valid against SCHEMA_DIR/NAME.schema.json. Prints every
violation with its JSON path and exits 1 when there is one; exits 2 when a schema is itself wrong.
"""
import json
import pathlib
import sys

import jsonschema


def load_schemas(folder):
    return {p.name[: -len(".schema.json")]: json.loads(p.read_text()) for p in folder.glob("*.schema.json")}


def validator_for(schemas, name):
    schema = schemas[name]
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    try:  # jsonschema >= 4.18: the referencing library
        from referencing import Registry, Resource

        registry = Registry().with_resources(
            (s["$id"], Resource.from_contents(s)) for s in schemas.values()
        )
        return cls(schema, registry=registry)
    except ImportError:  # Debian 12's jsonschema 4.10
        store = {s["$id"]: s for s in schemas.values()}
        return cls(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=store))


def main(argv):
    schemas = load_schemas(pathlib.Path(argv[1]))
    problems = 0
    for pair in argv[2:]:
        name, _, path = pair.partition("=")
        try:
            validator = validator_for(schemas, name)
        except (KeyError, jsonschema.SchemaError) as error:
            print(f"{name}: no usable schema: {error}")
            return 2
        document = json.loads(pathlib.Path(path).read_text())
        for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path)):
            where = "".join(f"[{p!r}]" for p in error.absolute_path) or "(root)"
            print(f"{path}: {name}.schema.json: at {where}: {error.message}")
            problems += 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
