#!/usr/bin/env python3
"""The public API of a swift-api-digester dump, one declaration a line, for people and diff.

    python3 Scripts/api-listing.py strip DUMP.json OUT.json   # the dump without its imports
    python3 Scripts/api-listing.py list DUMP.json             # the listing, sorted

Used by Scripts/api-check.sh. Each line is the declaration's kind and its demangled
signature (swift-demangle of the digester's mangled name: labels, types, `async`,
`throws(…)`, `static`, generics), then what the signature does not say: the accessors of a
property, which parameters have defaults, the declaration's attributes (`@available`,
`@discardableResult`, `@MainActor`, `final`, …) and a type's conformances. `CredFile.` and
`Swift.` are left out of names. Imports are not API (an `internal import` of a new C
module is not a change), nor are `package` declarations (the digester dumps them, marked
internal), nor the digester's notes on storage and initial values.
"""

import json
import re
import shutil
import subprocess
import sys

# declAttributes that say how a declaration is built, not what a client may write.
NOT_API = {"HasStorage", "HasInitialValue", "Implements", "Semantics", "Transparent"}
SHOWN_ACCESSORS = ("get", "set")


def without_imports(node):
    node = dict(node)
    if "children" in node:
        node["children"] = [without_imports(c) for c in node["children"] if c.get("declKind") != "Import"]
    return node


def declarations(node, found):
    if node.get("isInternal"):  # `package` or `@usableFromInline internal`: not public API
        return
    kind = node.get("declKind")
    if kind and kind not in ("Import", "Accessor") and node.get("mangledName"):
        found.append(node)
    for child in node.get("children", []):
        declarations(child, found)


def demangled(names):
    tool = shutil.which("swift-demangle")
    if tool is None:
        sys.exit("api-listing: swift-demangle (part of the Swift toolchain) is not on PATH")
    out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, check=True).stdout
    lines = out.split("\n")[: len(names)]
    assert len(lines) == len(names), "swift-demangle answered a different number of lines"
    return lines


def readable(text):
    return re.sub(r"\b(CredFile|Swift)\.", "", text)


def listing(dump):
    found = []
    declarations(dump["ABIRoot"], found)
    names = demangled([n["mangledName"] for n in found])
    lines = []
    for node, name in zip(found, names):
        parts = [node["declKind"].lower(), readable(name)]
        accessors = [a.get("accessorKind") for a in node.get("accessors", [])]
        shown = [a for a in SHOWN_ACCESSORS if a in accessors]
        if shown:
            parts.append("{ " + " ".join(shown) + " }")
        if node["declKind"] in ("Func", "Constructor", "Subscript"):
            defaults = [str(i) for i, c in enumerate(node.get("children", [])[1:], 1) if c.get("hasDefaultArg")]
            if defaults:
                parts.append("defaults(" + ",".join(defaults) + ")")
        if node.get("funcSelfKind") in ("Mutating", "Consuming"):
            parts.append(node["funcSelfKind"].lower())
        attributes = sorted(a for a in node.get("declAttributes", []) if a not in NOT_API)
        if node.get("deprecated"):
            attributes.append("Deprecated")
        if node.get("isEnumExhaustive") is False:
            attributes.append("NonExhaustive")
        if attributes:
            parts.append("@" + " @".join(attributes))
        conformances = sorted(readable(c.get("printedName", c.get("name", ""))) for c in node.get("conformances", []))
        if conformances:
            parts.append(": " + ", ".join(conformances))
        lines.append(" ".join(parts))
    return sorted(set(lines))


def main(argv):
    if len(argv) == 4 and argv[1] == "strip":
        with open(argv[2]) as f:
            dump = json.load(f)
        dump["ABIRoot"] = without_imports(dump["ABIRoot"])
        with open(argv[3], "w") as f:
            json.dump(dump, f, indent=1, sort_keys=True)
            f.write("\n")
    elif len(argv) == 3 and argv[1] == "list":
        with open(argv[2]) as f:
            print("\n".join(listing(json.load(f))))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
