"""JSON Schema checks for structured frontmatter values (hooks, skill-memory, step skills).

The schemas live in ``schemas/`` (published with the bundle).  Validators are compiled once per
``$defs`` entry and only run when the key is present, so ordinary skills pay nothing.  Each
jsonschema error becomes a ``SchemaIssue``: the key path inside the frontmatter (for
``Frontmatter.position``) and a human sentence; jsonschema's own wording never reaches users.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Iterator

from ....parse.document import a_type_name
from ....resources import schema_path

if TYPE_CHECKING:  # imported when a validator is first needed: ~0.3 s that most lint runs never pay
    import jsonschema

FULL_SCHEMA = "skill-frontmatter.schema.json"
SPEC_SCHEMA = "skill-frontmatter-spec.schema.json"
LIGHTWEIGHT_SCHEMA = "lightweight-skill.schema.json"

_JSON_TYPES = {"string": "text", "integer": "integer", "number": "number", "boolean": "boolean (true or false)",
               "object": "mapping", "array": "list", "null": "null"}


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    path: tuple  # key path relative to the frontmatter root
    message: str
    validator: str  # the JSON Schema keyword that failed (type, required, const, …)


@cache
def load_schema(name: str) -> dict[str, Any]:
    return json.loads(schema_path(name).read_text("utf-8"))


@cache
def validator(definition: str, schema: str = FULL_SCHEMA) -> jsonschema.protocols.Validator:
    """A compiled validator for ``#/$defs/<definition>`` (or the whole schema for ``""``)."""
    import jsonschema.validators

    root = load_schema(schema)
    sub = root if not definition else {"$defs": root["$defs"], "$ref": f"#/$defs/{definition}"}
    cls = jsonschema.validators.validator_for(root)
    if "$id" in root and not definition:  # (a schema may $ref a sibling by file name: resolved locally)
        return cls(root, registry=_registry())
    return cls(sub)


@cache
def _registry():
    """The project's schemas by their ``$id``, so a ``$ref`` to a sibling never leaves the machine."""
    from referencing import Registry, Resource

    from ....resources import data_dir

    docs = [json.loads(p.read_text("utf-8")) for p in sorted(data_dir("schemas").glob("*.schema.json"))]
    return Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs if "$id" in d)


_describe = a_type_name


def _expected(types: Any) -> str:
    if isinstance(types, str):
        types = [types]
    return " or ".join(_JSON_TYPES.get(t, t) for t in types)


def _where(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "frontmatter"


def _humanize(err: jsonschema.ValidationError, prefix: tuple) -> Iterator[SchemaIssue]:
    path = prefix + tuple(err.absolute_path)
    where = _where(path)
    kw = err.validator
    branches = err.validator_value if kw in ("anyOf", "oneOf") else None
    if branches and all(set(b) == {"required"} for b in branches):
        keys = " or ".join(repr(k) for b in branches for k in b["required"])
        yield SchemaIssue(path, f"{where} must have exactly one of {keys}", kw)
        return
    if kw in ("anyOf", "oneOf") and err.context:
        # Report the branch that got furthest (deepest path), unless every branch failed at the top.
        best = max(err.context, key=lambda e: (len(e.relative_path), e.validator not in ("type", "const")))
        if len(best.relative_path) > 0 or best.validator not in ("type", "const"):
            yield from _humanize(best, prefix)  # a context error's absolute_path includes the parent's
            return
        shapes = sorted({_expected(e.validator_value) for e in err.context if e.validator == "type"})
        shapes += [repr(e.validator_value) for e in err.context if e.validator == "const"]
        if shapes:
            yield SchemaIssue(path, f"{where} must be {' or '.join(shapes)}, found {_describe(err.instance)}", kw)
            return
        yield SchemaIssue(path, f"{where} has an unexpected shape", kw)
        return
    if kw == "type":
        msg = f"{where} must be {_expected(err.validator_value)}, found {_describe(err.instance)}"
    elif kw == "required":
        missing = err.message.split("'")[1] if "'" in err.message else "a required key"
        msg = f"{where} is missing required key {missing!r}"
    elif kw in ("additionalProperties", "unevaluatedProperties"):
        allowed = sorted((err.schema.get("properties") or {}).keys())
        extra = sorted(k for k in err.instance if k not in allowed) if isinstance(err.instance, dict) else []
        for key in extra:
            yield SchemaIssue(path + (key,), f"{where} has unknown key {key!r}"
                              + (f"; expected one of {', '.join(allowed)}" if allowed else ""), kw)
        return
    elif kw == "const":
        msg = f"{where} must be {err.validator_value!r}, found {err.instance!r}"
    elif kw == "enum":
        msg = f"{where} must be one of {', '.join(map(str, err.validator_value))}, found {err.instance!r}"
    elif kw in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        bound = {"minimum": "at least", "exclusiveMinimum": "greater than", "maximum": "at most",
                 "exclusiveMaximum": "less than"}[kw]
        msg = f"{where} must be {bound} {err.validator_value}, found {err.instance!r}"
    elif kw == "minItems":
        msg = f"{where} must not be empty"
    elif kw == "minLength":
        msg = f"{where} must not be empty"
    elif kw == "pattern":
        msg = f"{where} {err.instance!r} is not a valid identifier (letters, digits, '_' and '-')"
    elif kw == "propertyNames":
        msg = f"{where} has an invalid key name {err.instance!r}"
    else:  # pragma: no cover - every keyword our schemas use is handled above
        msg = f"{where} is invalid ({kw})"
    yield SchemaIssue(path, msg, kw)


def issues(value: Any, definition: str, prefix: tuple, schema: str = FULL_SCHEMA) -> list[SchemaIssue]:
    """Human-readable schema issues for ``value`` checked against ``#/$defs/<definition>``."""
    v = validator(definition, schema)
    out: list[SchemaIssue] = []
    for err in sorted(v.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path]):
        out.extend(_humanize(err, prefix))
    return out
