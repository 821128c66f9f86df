#!/usr/bin/env python3
"""doc_section.py DOC SECTION_FILE HEADING — put a bench script's section
(a "## HEADING" and its text, in SECTION_FILE) into DOC: in place of the
section of that heading, up to the next "## ", else at the end."""
import re
import sys

doc, sec, heading = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3]
try:
    text = open(doc).read()
except FileNotFoundError:
    text = "# pmubpf benchmarks\n\n"
m = re.search(r"^## " + re.escape(heading) + r"\n.*?(?=^## |\Z)", text, re.S | re.M)
if m:
    text = text[:m.start()] + sec + text[m.end():]
else:
    text = text.rstrip("\n") + "\n\n" + sec
open(doc, "w").write(text)
