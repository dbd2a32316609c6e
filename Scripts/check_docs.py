#!/usr/bin/env python3
"""What docc does not check on its own, for Scripts/docs.sh.

1. Every public symbol written by hand has a documentation comment of its own. A symbol that only
   inherits its protocol requirement's comment (a `description`, a `serialize(_:)` witness) is
   reported: its own behaviour is what a reader needs. Symbols the compiler synthesized (a raw-value
   `init(rawValue:)`, a derived `init(from:)`) have no source location and are skipped, and so are
   generated sources (`/Generated/`), which carry what their .proto file says.
2. Each landing page curates every top-level symbol and article in its Topics: nothing is left for
   docc to group by kind ("Structures", "Articles"), which is how symbols end up in "Other".
   Generated messages and clients are left to docc's grouping (an article names them by file):
   listing each of a .proto's types by hand would go stale with every regeneration.

Usage: check_docs.py --symbol-graphs DIR --archives DIR MODULE...
Exits 1 with one line per problem.
"""

import argparse
import glob
import json
import os
import sys
from urllib.parse import unquote, urlparse


def source_path(uri):
    return unquote(urlparse(uri).path) if uri else ""


def undocumented(module, graphs_dir):
    """(location, symbol path) of each hand-written public symbol without a comment of its own."""
    problems = []
    files = [os.path.join(graphs_dir, f"{module}.symbols.json")]
    files += sorted(glob.glob(os.path.join(graphs_dir, f"{module}@*.symbols.json")))
    for path in files:
        with open(path, encoding="utf-8") as handle:
            graph = json.load(handle)
        for symbol in graph.get("symbols", []):
            location = symbol.get("location")
            if not location:
                continue  # synthesized by the compiler
            where = source_path(location.get("uri"))
            if "/Generated/" in where:
                continue
            comment = symbol.get("docComment") or {}
            text = "".join(line.get("text", "") for line in comment.get("lines", [])).strip()
            own = source_path(comment.get("uri")) == where if comment.get("uri") else "module" not in comment
            if not text or not own:
                line = location.get("position", {}).get("line", 0) + 1
                name = "/".join(symbol.get("pathComponents", [])) or symbol["identifier"]["precise"]
                why = "no documentation comment" if not text else "only the comment it inherits"
                problems.append(f"{os.path.relpath(where)}:{line}: public {module}/{name} has {why}")
    return problems


# Symbols that exist on some platforms only (where `Security` exists). A Topics link to them would
# break the build everywhere else, so the articles name them in code voice and they may stay
# uncurated.
PLATFORM_ONLY = {"OAuth2": {"KeychainAuthSessionStore", "GTMOAuth2KeychainSource"}}


def generated_names(module, graphs_dir):
    """The top-level symbols of the module that come from generated sources."""
    names = set()
    with open(os.path.join(graphs_dir, f"{module}.symbols.json"), encoding="utf-8") as handle:
        graph = json.load(handle)
    for symbol in graph.get("symbols", []):
        where = source_path((symbol.get("location") or {}).get("uri"))
        if "/Generated/" in where and len(symbol.get("pathComponents", [])) == 1:
            names.add(symbol["pathComponents"][0].lower())
    return names


def uncurated(module, archives_dir, generated=frozenset()):
    """The identifiers docc grouped by itself on the module's landing page."""
    page = os.path.join(archives_dir, f"{module}.doccarchive", "data", "documentation", f"{module.lower()}.json")
    with open(page, encoding="utf-8") as handle:
        data = json.load(handle)
    problems = []
    for section in data.get("topicSections", []):
        if section.get("generated"):
            for identifier in section.get("identifiers", []):
                name = identifier.rsplit("/documentation/", 1)[-1]
                if name.split("/")[-1] in PLATFORM_ONLY.get(module, set()):
                    continue
                if name.split("/")[-1].lower() in generated:
                    continue
                problems.append(
                    f"Sources/{module}/{module}.docc/{module}.md: {name} is not in the Topics"
                    f" (docc put it under \"{section.get('title')}\")"
                )
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--symbol-graphs", required=True, help="the directory of NAME.symbols.json files")
    parser.add_argument("--archives", required=True, help="the directory of NAME.doccarchive outputs")
    parser.add_argument("modules", nargs="+")
    arguments = parser.parse_args()

    problems = []
    for module in arguments.modules:
        problems += undocumented(module, arguments.symbol_graphs)
        problems += uncurated(module, arguments.archives, generated_names(module, arguments.symbol_graphs))
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        print(f"docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"docs: every public symbol of {', '.join(arguments.modules)} documented and curated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
