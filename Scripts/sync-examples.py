#!/usr/bin/env python3
"""Copies each example file into the pages that show it.

A page (README.md, Documentation/*.md) shows a file of Examples/ in a fenced block
marked on the line before its opening fence:

    <!-- file: Examples/pam/credfile-app -->
    ```
    ```

This rewrites every such block's body to the file's bytes, so a page shows exactly
what the integration tests run (Tests/CLITests/DocumentationPagesTests.swift fails
when they differ). Run it after changing an example:

    python3 Scripts/sync-examples.py        # rewrites the pages in place
    python3 Scripts/sync-examples.py --check  # exit 1 when a page would change
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
marker = re.compile(r"<!-- file: (\S+) -->\n(```[^\n]*\n)(.*?)(^```$)", re.S | re.M)
pages = [root / "README.md"] + sorted(p for p in (root / "Documentation").glob("*.md") if p.name != "SPEC.md")
changed = []
for page in pages:
    text = page.read_text(encoding="utf-8")

    def body(match):
        shown = (root / match.group(1)).read_text(encoding="utf-8")
        return f"<!-- file: {match.group(1)} -->\n{match.group(2)}{shown}{match.group(4)}"

    new = marker.sub(body, text)
    if new != text:
        changed.append(page.relative_to(root))
        if "--check" not in sys.argv:
            page.write_text(new, encoding="utf-8")
for page in changed:
    print(page)
sys.exit(1 if changed and "--check" in sys.argv else 0)
